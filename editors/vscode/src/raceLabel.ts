// What tells races apart where they are listed (the view, the race pickers,
// the history): several races of the same task read alike by their task
// alone, so each row also says when it started, who won and a short id, the
// shortest prefix of its id that `hydra` accepts for it among the races listed.
import type { RaceSummary } from './protocol';
import { ALL_FAILED, NO_GOOD_ROUND, mergedText } from './format';

/**
 * Race ids ("20261121-101500-a3f9") begin with the day: a prefix shorter
 * than that would read as a date cut short.
 */
export const SHORT_ID_MIN = 8;

/**
 * Each id's shortest prefix (of at least SHORT_ID_MIN characters) that no
 * other id in `ids` begins with; hydra resolves such a prefix to the race (a
 * race id is never a prefix of another: they all have the same length).
 */
export function shortIds(ids: string[]): Map<string, string> {
  const shorts = new Map<string, string>();
  for (const id of ids) {
    let length = Math.min(SHORT_ID_MIN, id.length);
    for (const other of ids) {
      if (other === id) continue;
      let common = 0;
      while (common < id.length && common < other.length && id[common] === other[common]) common++;
      length = Math.max(length, Math.min(common + 1, id.length));
    }
    shorts.set(id, id.slice(0, length));
  }
  return shorts;
}

const two = (n: number) => String(n).padStart(2, '0');
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * When a race started, in local time: "10:15" today, "Nov 21 10:15" this
 * year, "2025 Nov 21 10:15" before; undefined when `createdAt` is not a time.
 */
export function startedText(createdAt: string | undefined, now: Date): string | undefined {
  const at = createdAt ? new Date(createdAt) : undefined;
  if (!at || Number.isNaN(at.getTime())) return undefined;
  const time = `${two(at.getHours())}:${two(at.getMinutes())}`;
  const sameYear = at.getFullYear() === now.getFullYear();
  if (sameYear && at.getMonth() === now.getMonth() && at.getDate() === now.getDate()) return time;
  const day = `${MONTHS[at.getMonth()]} ${at.getDate()} ${time}`;
  return sameYear ? day : `${at.getFullYear()} ${day}`;
}

export interface RaceRowFacts {
  /** What the race does now or how it ended ("completed", or a collaboration's own description). */
  state: string;
  /** The winner, from its scores or its summary. */
  winner?: string | null;
  /** Every agent failed: no winner. */
  allFailed?: boolean;
  /** A collaboration: its rounds scored too low, said of rounds (its builder may have completed). */
  collab?: boolean;
  /** Its short id (shortIds). */
  shortId: string;
}

/**
 * A race's row beside its task: "completed · 10:15 · winner careful ·
 * 20261121-1015". A merged race names the agent merged instead of the
 * winner; a race without one says so.
 */
export function raceRowDescription(race: Pick<RaceSummary, 'createdAt' | 'merged'>, facts: RaceRowFacts, now: Date): string {
  const parts = [facts.state];
  const started = startedText(race.createdAt, now);
  if (started) parts.push(started);
  if (race.merged) parts.push(mergedText(race.merged, true));
  else if (facts.allFailed) parts.push(facts.collab ? NO_GOOD_ROUND : ALL_FAILED);
  else if (facts.winner) parts.push(`winner ${facts.winner}`);
  parts.push(facts.shortId);
  return parts.join(' · ');
}
