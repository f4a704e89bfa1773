// Collaborations (a builder agent and a reviewer agent, in rounds) as the
// user reads them: which iteration is in which phase, what each iteration
// scored and what its review said, why the collaboration stopped. Pure
// functions over hydra's summaries and notifications: no VS Code import, so
// the unit tests run them under plain Node.
import type {
  AgentState, CollabPhase, CollabStopReason, CollaborationInfo, IterationSummary, MergedRecord, RaceSummary, Ranking, ScoreBreakdown,
} from './protocol';
import { raceIsActive } from './format';

/** What a running collaboration is doing now: an agent's run of an iteration, or the scoring of its commit. */
export interface LivePhase {
  phase: CollabPhase | 'scoring';
  iteration: number;
}

export function isCollab(race: Pick<RaceSummary, 'kind' | 'collaboration'> | undefined): boolean {
  return race?.kind === 'collab' || race?.collaboration !== undefined;
}

/** "builder@N": what hydra/diff, hydra/merge and hydra/scores call iteration N. */
export function iterationAgentId(iteration: number): string {
  return `builder@${iteration}`;
}

/** N of "builder@N"; undefined for any other agent id. */
export function iterationOf(agentId: string | undefined): number | undefined {
  const m = /^builder@([1-9]\d*)$/.exec(agentId ?? '');
  return m ? Number(m[1]) : undefined;
}

/** "iteration 2: refining", as hydra's progress says it. */
export function phaseText(live: LivePhase): string {
  const doing = { build: 'building', review: 'reviewing', refine: 'refining', scoring: 'scoring' }[live.phase];
  return `iteration ${live.iteration}: ${doing}`;
}

/** Why a collaboration stopped, in words. */
export function stopReasonText(reason: CollabStopReason | string, info?: Pick<CollaborationInfo, 'maxIterations' | 'untilScore'>): string {
  switch (reason) {
    case 'untilScore': return info?.untilScore !== undefined && info.untilScore !== null
      ? `an unflagged iteration reached the score asked for (${info.untilScore})` : 'an unflagged iteration reached the score asked for';
    case 'approved': return 'approved by the reviewer';
    case 'maxIterations': return info?.maxIterations ? `${info.maxIterations} iterations done` : 'all iterations done';
    case 'unchanged': return 'the builder changed nothing';
    case 'builderFailed': return 'the builder failed';
    case 'reviewerFailed': return 'the reviewer failed';
    case 'cancelled': return 'cancelled';
    case 'interrupted': return 'hydra stopped before it ended';
    // A word from a newer hydra: said in a sentence, the word in parentheses.
    default: return `for a reason this extension does not know (${reason})`;
  }
}

/** The first line of a review that says something, without its Markdown marks (heading, list, quote, emphasis). */
export function reviewFirstLine(review: string | undefined, max = 80): string | undefined {
  for (const raw of (review ?? '').split(/\r?\n/)) {
    const line = raw.replace(/^\s*(?:#{1,6}\s+|[-*+]\s+|>\s*|\d+[.)]\s+)*/, '').replace(/[*_`]+/g, '').trim();
    if (line === '' || /^[-=*_]{3,}$/.test(line)) continue;
    return line.length > max ? `${line.slice(0, max - 1)}…` : line;
  }
  return undefined;
}

const DIMENSIONS: Array<[keyof ScoreBreakdown, string]> = [
  ['build', 'build'], ['tests', 'tests'], ['lint', 'lint'], ['diffSize', 'diff size'], ['speed', 'speed'],
];

/** "build 100 · tests 75 · lint n/a · diff size 90 · speed 70" (n/a: not configured). */
export function breakdownText(breakdown: Partial<ScoreBreakdown> | undefined): string | undefined {
  if (!breakdown) return undefined;
  return DIMENSIONS.map(([key, name]) => {
    const v = breakdown[key];
    return `${name} ${v === null || v === undefined ? 'n/a' : Number.isInteger(v) ? String(v) : v.toFixed(1)}`;
  }).join(' · ');
}

/**
 * What a running collaboration does, when no notification said it (a
 * collaboration this window did not start): the builder running builds the
 * iteration after the last one recorded, the reviewer reviews the last one.
 */
export function phaseFromSummary(race: RaceSummary): LivePhase | undefined {
  if (!raceIsActive(race.state)) return undefined;
  const last = Math.max(0, ...(race.iterations ?? []).map((i) => i.iteration));
  const running = (id: string) => race.agents.some((a) => a.agentId === id && a.state === 'running');
  if (running('builder')) return { phase: last === 0 ? 'build' : 'refine', iteration: last + 1 };
  if (running('reviewer')) return { phase: 'review', iteration: Math.max(1, last) };
  return undefined;
}

/** One row of a collaboration's iterations: what hydra recorded of it, and what it is doing if it is not done. */
export interface IterationRow {
  iteration: number;
  agentId: string;
  summary?: IterationSummary;
  phase?: LivePhase['phase'];
}

/**
 * A collaboration's iterations, first first: those recorded, and the one in
 * progress (which may be recorded already: its review runs after its score).
 */
export function iterationRows(race: RaceSummary, live: LivePhase | undefined): IterationRow[] {
  const rows = new Map<number, IterationRow>();
  for (const s of race.iterations ?? []) rows.set(s.iteration, { iteration: s.iteration, agentId: iterationAgentId(s.iteration), summary: s });
  if (live && raceIsActive(race.state)) {
    const row = rows.get(live.iteration) ?? { iteration: live.iteration, agentId: iterationAgentId(live.iteration) };
    rows.set(live.iteration, { ...row, phase: live.phase });
  }
  return [...rows.values()].sort((a, b) => a.iteration - b.iteration);
}

/** Everything a row of an iteration is drawn from besides the iteration itself. */
export interface IterationContext {
  collaboration?: CollaborationInfo;
  /** The best iteration's agent id ("builder@2"), once known. */
  winner?: string | null;
  merged?: MergedRecord;
  /** Its ranking (hydra/scores, hydra/raceFinished or hydra/iterationFinished), when known. */
  ranking?: Ranking;
  /** The last iteration recorded: the one the stop reason belongs to. */
  last: boolean;
}

function scoreOf(row: IterationRow, ranking: Ranking | undefined): number | undefined {
  return row.summary?.score ?? ranking?.total;
}

/** The text beside an iteration's name: its phase, score, whether it won or was merged, its review and why it stopped. */
export function iterationDescription(row: IterationRow, ctx: IterationContext): string {
  const parts: string[] = [];
  if (row.phase) parts.push(`${phaseText({ phase: row.phase, iteration: row.iteration }).replace(/^iteration \d+: /, '')}…`);
  const s = row.summary;
  if (s && s.builderStatus !== 'completed') parts.push(`builder ${s.builderStatus}`);
  const score = scoreOf(row, ctx.ranking);
  if (score !== undefined) parts.push(score.toFixed(1));
  else if (s && !row.phase) parts.push('not scored');
  if (ctx.winner === row.agentId) parts.push('winner');
  if (ctx.merged?.agentId === row.agentId) parts.push(`merged into ${ctx.merged.targetBranch || 'your branch'}`);
  if (s?.approved) parts.push('approved');
  else if (s?.review !== undefined) parts.push(`review: ${reviewFirstLine(s.review) ?? '(empty)'}`);
  else if (s?.reviewStatus && s.reviewStatus !== 'completed') parts.push(`review ${s.reviewStatus}`);
  const stop = ctx.collaboration?.stopReason;
  if (ctx.last && stop && !row.phase) parts.push(stop === 'cancelled' ? 'cancelled' : `stopped: ${stopReasonText(stop, ctx.collaboration)}`);
  return parts.join(' · ');
}

/** An iteration's tooltip: its commit, how the builder ran, its score with the breakdown, its review's opening and the stop. */
export function iterationTooltip(row: IterationRow, ctx: IterationContext): string {
  const lines: string[] = [];
  const of = ctx.collaboration?.maxIterations ? ` of at most ${ctx.collaboration.maxIterations}` : '';
  lines.push(`${row.agentId}: iteration ${row.iteration}${of}`);
  if (row.phase) lines.push(phaseText({ phase: row.phase, iteration: row.iteration }));
  const s = row.summary;
  if (s?.commit) lines.push(`commit ${s.commit.slice(0, 12)}`);
  if (s) lines.push(`builder${ctx.collaboration ? ` (${ctx.collaboration.builder})` : ''}: ${s.builderStatus}${s.resumed ? ', resumed its session' : ''}`);
  const score = scoreOf(row, ctx.ranking);
  if (score !== undefined) {
    const breakdown = breakdownText(s?.breakdown ?? ctx.ranking?.breakdown);
    lines.push(`score ${score.toFixed(1)} / 100${breakdown ? `: ${breakdown}` : ''}`);
  }
  if (ctx.winner === row.agentId) lines.push('the best iteration: the winner');
  if (ctx.merged?.agentId === row.agentId) lines.push(`merged into ${ctx.merged.targetBranch || 'your branch'}`);
  const reviewer = ctx.collaboration ? ` (${ctx.collaboration.reviewer})` : '';
  if (s?.review !== undefined) {
    lines.push(`review${reviewer}${s.approved ? ', approved' : ''}:`);
    const text = s.review.trim().split(/\r?\n/);
    lines.push(...text.slice(0, 8));
    if (text.length > 8) lines.push('…');
  } else if (s?.reviewStatus) {
    lines.push(`review${reviewer}: ${s.reviewStatus}`);
  } else if (s && !row.phase) {
    lines.push('not reviewed');
  }
  const stop = ctx.collaboration?.stopReason;
  if (ctx.last && stop && !row.phase) lines.push(`stopped: ${stopReasonText(stop, ctx.collaboration)}`);
  return lines.join('\n');
}

/** The text beside a collaboration's task: what it does now, or why it stopped and which iteration is best. */
export function collabDescription(race: RaceSummary, live: LivePhase | undefined, winner: string | null | undefined): string {
  const parts = ['collab'];
  if (raceIsActive(race.state)) {
    parts.push(live ? phaseText(live) : race.state);
  } else {
    parts.push(race.state);
    // A cancelled one says "cancelled" once (hydra gives that as its stop reason too).
    const stop = race.collaboration?.stopReason;
    if (stop && stop !== race.state) parts.push(stopReasonText(stop, race.collaboration));
    if (winner) {
      const score = race.iterations?.find((i) => iterationAgentId(i.iteration) === winner)?.score;
      parts.push(`best ${winner}${score !== undefined ? ` (${score.toFixed(1)})` : ''}`);
    }
  }
  return parts.join(' · ');
}

/** A collaboration's tooltip: its task, its two agents and its settings. */
export function collabTooltip(race: RaceSummary): string {
  const c = race.collaboration;
  const lines = [race.task];
  if (c) {
    lines.push(`builder: ${c.builder} · reviewer: ${c.reviewer}`);
    const until = c.untilScore !== undefined && c.untilScore !== null ? `, until a score of ${c.untilScore}` : '';
    lines.push(`at most ${c.maxIterations} iteration(s)${until}; "${c.approveMarker}" in a review approves`);
    if (c.stopReason) lines.push(`stopped: ${stopReasonText(c.stopReason, c)}`);
  }
  return lines.join('\n');
}

const AGENT_STATES = new Set(['queued', 'running', 'completed', 'failed', 'timedOut', 'cancelled', 'interrupted', 'setupFailed']);

/**
 * The iterations of a collaboration as the agents a command can act on
 * (diff, merge, compare): "builder@N" with the builder's name, branch and
 * worktree. Only those that left a commit, or all when none says.
 */
export function iterationAgents(race: RaceSummary): AgentState[] {
  const builder = race.agents.find((a) => a.agentId === 'builder');
  return (race.iterations ?? [])
    .filter((i) => i.commit !== undefined || i.builderStatus === 'completed')
    .sort((a, b) => a.iteration - b.iteration)
    .map((i) => ({
      agentId: iterationAgentId(i.iteration),
      agent: race.collaboration?.builder ?? builder?.agent ?? 'builder',
      state: (AGENT_STATES.has(i.builderStatus) ? i.builderStatus : 'completed') as AgentState['state'],
      elapsedMs: 0,
      branch: builder?.branch ?? '',
      worktree: builder?.worktree ?? '',
      commit: i.commit,
      total: i.score,
    }));
}

/** How a quick pick describes an iteration: its score and the opening of its review. */
export function iterationPickDescription(race: RaceSummary, agentId: string): string | undefined {
  const n = iterationOf(agentId);
  const s = race.iterations?.find((i) => i.iteration === n);
  if (!s) return undefined;
  const parts = [`iteration ${s.iteration}`];
  if (s.score !== undefined) parts.push(s.score.toFixed(1));
  if (race.winner === agentId) parts.push('winner');
  if (s.approved) parts.push('approved');
  else if (s.review !== undefined) parts.push(`review: ${reviewFirstLine(s.review) ?? '(empty)'}`);
  return parts.join(' · ');
}

/** What a live hydra/iterationFinished makes of a recorded iteration. */
export function iterationFromNotification(p: {
  iteration: number; commit?: string; builderStatus: string; resumed: boolean; score?: Ranking; review?: string; reviewStatus?: string;
  approved: boolean;
}): IterationSummary {
  const s: IterationSummary = { iteration: p.iteration, builderStatus: p.builderStatus, resumed: p.resumed, approved: p.approved };
  if (p.commit !== undefined) s.commit = p.commit;
  if (p.score) {
    s.score = p.score.total;
    s.breakdown = p.score.breakdown;
  }
  if (p.review !== undefined) s.review = p.review;
  if (p.reviewStatus !== undefined) s.reviewStatus = p.reviewStatus;
  return s;
}
