// An agent's change to a file as hunks (runs of lines it changed, without
// context), and taking one of them into the user's version of the file: the
// lines the agent replaced must still be there, as they were at the base, or
// nothing is taken. No VS Code imports: the unit tests run it under plain Node.

/** Lines [baseStart, baseEnd) of the base became lines [agentStart, agentEnd) of the agent's version (0-based). */
export interface Hunk {
  baseStart: number;
  baseEnd: number;
  agentStart: number;
  agentEnd: number;
}

/** A text's lines, split at '\n' (a text ending with a newline ends with an empty line, as an editor shows it). */
export function splitLines(text: string): string[] {
  return text.split('\n');
}

// Beyond this many differences the diff is not worth its cost: what lies
// between the common start and end becomes one hunk.
const MAX_EDITS = 2000;

/** The hunks that turn `base` into `agent`, in order; two hunks always have an unchanged line between them. */
export function diffLines(base: readonly string[], agent: readonly string[]): Hunk[] {
  let start = 0;
  while (start < base.length && start < agent.length && base[start] === agent[start]) start++;
  let end = 0;
  while (end < base.length - start && end < agent.length - start &&
    base[base.length - 1 - end] === agent[agent.length - 1 - end]) end++;
  const a = base.slice(start, base.length - end);
  const b = agent.slice(start, agent.length - end);
  const hunks: Hunk[] = [];
  if (a.length === 0 && b.length === 0) return hunks;
  const matches = commonLines(a, b) ?? [];
  let i = 0;
  let j = 0;
  for (const [mi, mj] of [...matches, [a.length, b.length]]) {
    if (mi > i || mj > j) hunks.push({ baseStart: start + i, baseEnd: start + mi, agentStart: start + j, agentEnd: start + mj });
    i = mi + 1;
    j = mj + 1;
  }
  return settle(hunks, base, agent);
}

const blank = (line: string | undefined) => line === undefined || line.trim() === '';

/**
 * Lines added (or removed) next to lines like them can be shown at several
 * places: a function added after a blank line and a closing brace is as
 * well "}, blank, function" as "blank, function, }". Each such hunk is moved
 * where a reader (and VS Code's diff editor) puts it: ending on a line that
 * is not blank, before a blank line or the end of the file; else starting on
 * a line that is not blank, after a blank one; else where it was found.
 */
function settle(hunks: Hunk[], base: readonly string[], agent: readonly string[]): Hunk[] {
  const settled: Hunk[] = [];
  hunks.forEach((h, i) => {
    const insertion = h.baseStart === h.baseEnd;
    if (insertion === (h.agentStart === h.agentEnd)) {
      settled.push(h); // a replacement stays where it is
      return;
    }
    const lines = insertion ? agent : base;
    const [s, e] = insertion ? [h.agentStart, h.agentEnd] : [h.baseStart, h.baseEnd];
    const previous = settled[settled.length - 1];
    const previousEnd = previous ? (insertion ? previous.agentEnd : previous.baseEnd) : -1;
    const next = hunks[i + 1];
    const nextStart = next ? (insertion ? next.agentStart : next.baseStart) : lines.length + 1;
    // How far it can move, keeping an unchanged line between it and its neighbours.
    let up = 0;
    while (s - up - 1 >= previousEnd + 1 && lines[s - up - 1] === lines[e - up - 1]) up++;
    let down = 0;
    while (e + down + 1 <= nextStart - 1 && lines[s + down] === lines[e + down]) down++;
    const score = (t: number) => (!blank(lines[e + t - 1]) && blank(lines[e + t]) ? 2
      : !blank(lines[s + t]) && (s + t === 0 || blank(lines[s + t - 1])) ? 1 : 0);
    let best = 0;
    for (let t = -up; t <= down; t++) {
      if (score(t) > score(best) || (score(t) === score(best) && Math.abs(t) < Math.abs(best))) best = t;
    }
    settled.push({ baseStart: h.baseStart + best, baseEnd: h.baseEnd + best, agentStart: h.agentStart + best, agentEnd: h.agentEnd + best });
  });
  return settled;
}

/**
 * The pairs of lines a longest common subsequence of `a` and `b` matches, in
 * order (Myers' O(ND) algorithm); undefined when they differ in more than
 * MAX_EDITS lines.
 */
function commonLines(a: readonly string[], b: readonly string[]): Array<[number, number]> | undefined {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) return [];
  const limit = Math.min(n + m, MAX_EDITS);
  const offset = limit + 1;
  const v = new Int32Array(2 * limit + 3);
  // trace[d]: the furthest x on each diagonal before step d.
  const trace: Int32Array[] = [];
  let found = false;
  for (let d = 0; d <= limit && !found; d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
  }
  if (!found) return undefined;
  const pairs: Array<[number, number]> = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const saved = trace[d];
    // saved[i] is v[offset - d - 1 + i]: diagonal k is at k + d + 1.
    const at = (k: number) => saved[k + d + 1];
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      pairs.push([x, y]);
    }
    x = prevX;
    y = prevY;
  }
  return pairs.reverse();
}

/**
 * The hunk at `line` (0-based) of one side of the diff: the agent's version
 * or the base. A hunk that only removes lines has none on that side: the line
 * before or after the removal picks it.
 */
export function hunkAt(hunks: readonly Hunk[], line: number, side: 'base' | 'agent'): Hunk | undefined {
  const range = (h: Hunk) => (side === 'agent' ? [h.agentStart, h.agentEnd] : [h.baseStart, h.baseEnd]);
  return hunks.find((h) => {
    const [s, e] = range(h);
    return line >= s && line < e;
  }) ?? hunks.find((h) => {
    const [s, e] = range(h);
    return s === e && (line === s || line === s - 1);
  });
}

export type TakeResult =
  | { lines: string[]; at: number }
  | { problem: 'taken' | 'conflict' };

/**
 * `working` with `hunk` of the agent's change taken into it. The lines the
 * hunk replaces are found where the user's own changes (against the base)
 * moved them; when the user changed them, or right next to an insertion, it
 * is a conflict, unless what is there is the agent's version already
 * (`taken`). `at`: where the agent's lines start in the result.
 */
export function takeHunk(base: readonly string[], agent: readonly string[], hunk: Hunk, working: readonly string[]): TakeResult {
  const own = diffLines(base, working);
  const touches = (w: Hunk) =>
    (w.baseStart < hunk.baseEnd && hunk.baseStart < w.baseEnd) ||
    ((w.baseStart === w.baseEnd || hunk.baseStart === hunk.baseEnd) && w.baseStart <= hunk.baseEnd && hunk.baseStart <= w.baseEnd);
  const grow = (w: Hunk) => (w.agentEnd - w.agentStart) - (w.baseEnd - w.baseStart);
  const before = own.filter((w) => !touches(w) && w.baseEnd <= hunk.baseStart);
  const shift = before.reduce((sum, w) => sum + grow(w), 0);
  const overlapping = own.filter(touches);
  const theirs = agent.slice(hunk.agentStart, hunk.agentEnd);
  if (overlapping.length === 0) {
    const at = hunk.baseStart + shift;
    const lines = [...working.slice(0, at), ...theirs, ...working.slice(at + hunk.baseEnd - hunk.baseStart)];
    return { lines, at };
  }
  // The stretch of the base the user's changes and the hunk cover: is it the agent's version already?
  const from = Math.min(hunk.baseStart, ...overlapping.map((w) => w.baseStart));
  const to = Math.max(hunk.baseEnd, ...overlapping.map((w) => w.baseEnd));
  const wanted = [...base.slice(from, hunk.baseStart), ...theirs, ...base.slice(hunk.baseEnd, to)];
  const start = from + shift;
  const there = working.slice(start, to + shift + overlapping.reduce((sum, w) => sum + grow(w), 0));
  const same = there.length === wanted.length && there.every((l, i) => l === wanted[i]);
  return { problem: same ? 'taken' : 'conflict' };
}

/** The one edit that turns `before` into `after`: the characters [start, end) of `before` become `text`. */
export function textEdit(before: string, after: string): { start: number; end: number; text: string } {
  let start = 0;
  const shorter = Math.min(before.length, after.length);
  while (start < shorter && before[start] === after[start]) start++;
  let end = 0;
  while (end < shorter - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end++;
  return { start, end: before.length - end, text: after.slice(start, after.length - end) };
}

/** The line and character (0-based) of `offset` in `text`, whose lines end in '\n'. */
export function positionOf(text: string, offset: number): { line: number; character: number } {
  let line = 0;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, character: offset - lineStart };
}
