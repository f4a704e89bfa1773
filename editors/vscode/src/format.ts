// Small pure functions that turn hydra's answers into what the user reads.
// They import nothing from VS Code, so the unit tests run them under plain Node.
import type {
  AgentEvent, AgentOutputParams, AgentState, AgentStateName, CheckResult, MergeRefusedReason, MergeResult, MergedRecord,
  RaceFinishedParams, RaceStateName, Ranking, ScoresResult, TestChanges, Usage,
} from './protocol';

export type ScoreBand = 'good' | 'fair' | 'poor' | 'none';

/** The colour band of a 0-100 score: green above 80, yellow from 50 to 80, red below 50. */
export function scoreBand(value: number | null | undefined): ScoreBand {
  if (value === null || value === undefined || Number.isNaN(value)) return 'none';
  if (value > 80) return 'good';
  if (value >= 50) return 'fair';
  return 'poor';
}

/**
 * A score with one decimal, "97.1", as the CLI shows it: never higher than it
 * is, so 99.96 is "99.9", not "100.0".
 */
export function formatTotal(value: number): string {
  return (value < 100 && value > 99.9 ? 99.9 : value).toFixed(1);
}

/**
 * A part of a score (one bar) as a whole number, "71", as the CLI shows it:
 * 99.7 is "99", so only 100 reads "100" and 2 failing tests of 704 never look like none.
 */
export function formatPartScore(value: number): string {
  return value < 100 && value >= 99.5 ? '99' : value.toFixed(0);
}

/** "850ms", "4.2s", "1m 05s", "1h 02m". */
export function formatElapsed(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const totalSeconds = Math.floor(seconds);
  const minutes = Math.floor(totalSeconds / 60);
  if (minutes < 60) return `${minutes}m ${String(totalSeconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
}

/** The codicon that shows an agent's state in the tree. */
export function agentStateIcon(state: AgentStateName): string {
  switch (state) {
    case 'queued': return 'clock';
    case 'running': return 'sync~spin';
    case 'completed': return 'pass';
    case 'failed': return 'error';
    case 'timedOut': return 'watch';
    case 'cancelled': return 'circle-slash';
    case 'interrupted': return 'debug-disconnect';
    case 'setupFailed': return 'tools';
    case 'notNeeded': return 'dash';
  }
}

/** An agent's state in plain words: "timed out" for the wire's timedOut, "not needed" for notNeeded. */
export function plainState(state: AgentStateName): string {
  switch (state) {
    case 'timedOut': return 'timed out';
    case 'setupFailed': return 'setup failed';
    case 'notNeeded': return 'not needed';
    default: return state;
  }
}

export function raceIsActive(state: RaceStateName): boolean {
  return state === 'running' || state === 'scoring';
}

/**
 * An error from the server as a notification shows it: its message, and what
 * its data names that the message does not say already (hydra's messages
 * often name the files, the known agents, the closest name and the problem).
 */
export function describeServerError(error: unknown): string {
  // Its words may quote an agent's: a file name, a line of its output.
  if (typeof error !== 'object' || error === null) return visibleControls(String(error));
  const e = error as { message?: unknown; data?: unknown };
  const message = typeof e.message === 'string' ? e.message : String(error);
  const data = e.data as Record<string, unknown> | undefined | null;
  if (!data || typeof data !== 'object') return visibleControls(message);
  const extras: string[] = [];
  // UnknownAgentName: the name it probably meant; AgentUnavailable: why it cannot run.
  if (typeof data.suggestion === 'string' && data.suggestion && !message.includes(`'${data.suggestion}'`)) {
    extras.push(`did you mean '${data.suggestion}'?`);
  }
  if (typeof data.problem === 'string' && data.problem && !message.includes(data.problem)) extras.push(data.problem);
  const unsaid = (list: unknown) => Array.isArray(list) && list.length > 0 && !list.every((x) => message.includes(String(x)));
  if (unsaid(data.files)) extras.push(`files: ${(data.files as unknown[]).join(', ')}`);
  if (unsaid(data.known)) extras.push(`known agents: ${(data.known as unknown[]).join(', ')}`);
  if (typeof data.file === 'string' && typeof data.line === 'number' && data.line > 0) {
    const where = `${data.file}:${data.line}:${typeof data.column === 'number' ? data.column : 0}`;
    // hydra's ConfigError message usually names the place already.
    if (!message.includes(`${data.file}:${data.line}`)) extras.push(where);
  }
  return visibleControls(extras.length > 0 ? `${message} (${extras.join('; ')})` : message);
}

/**
 * The agent a refused hydra/race names (UnknownAgentName, AgentUnavailable:
 * `data.agent`), and the name hydra suggests instead (`data.suggestion`).
 */
export function refusedAgent(error: unknown): { agent: string; suggestion?: string } | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const data = (error as { data?: unknown }).data as Record<string, unknown> | undefined | null;
  if (!data || typeof data !== 'object' || typeof data.agent !== 'string') return undefined;
  return { agent: data.agent, suggestion: typeof data.suggestion === 'string' && data.suggestion ? data.suggestion : undefined };
}

/** `agents` with `name` replaced by `instead` wherever it appears. */
export function replaceAgent(agents: string[], name: string, instead: string): string[] {
  return agents.map((a) => (a === name ? instead : a));
}

/** "Merged fixer into main" ("merged ..." within a line): what a merged race says wherever it is shown. */
export function mergedText(m: Pick<MergedRecord, 'agentId' | 'targetBranch'>, within = false): string {
  return `${within ? 'merged' : 'Merged'} ${m.agentId} into ${m.targetBranch || 'your branch'}`;
}

/** How it was merged: "fast-forward, at 1a2b3c4d, by auto_merge". */
export function mergedDetail(m: MergedRecord): string {
  const how: Record<string, string> = { fastForward: 'fast-forward', merged: 'merge commit', upToDate: 'already there' };
  const parts = [how[m.outcome] ?? m.outcome];
  if (m.commit) parts.push(`at ${m.commit.slice(0, 8)}`);
  if (m.automatic) parts.push('by auto_merge');
  return parts.join(', ');
}

/**
 * The agent a refused hydra/merge says was merged already (MergeRefused with
 * `data.reason` alreadyMerged: a race gives one result); undefined for any
 * other error.
 */
export function alreadyMergedAgent(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const data = (error as { data?: unknown }).data as { reason?: unknown; agentId?: unknown } | undefined | null;
  const reason: MergeRefusedReason = 'alreadyMerged';
  if (!data || typeof data !== 'object' || data.reason !== reason) return undefined;
  return typeof data.agentId === 'string' ? data.agentId : '';
}

/** What a dry-run merge would do, for the confirmation dialog. */
export function describeDryRun(result: MergeResult): string {
  const files = result.files.length === 1 ? '1 file' : `${result.files.length} files`;
  switch (result.outcome) {
    case 'fastForward':
      return `Fast-forward ${result.targetBranch} to ${result.branch} (${files}: ${result.files.join(', ')}).`;
    case 'merged':
      return `Merge ${result.branch} into ${result.targetBranch} with a merge commit (${files}: ${result.files.join(', ')}).`;
    case 'upToDate':
      return `${result.targetBranch} already contains ${result.branch}: nothing to merge.`;
    case 'conflict':
      return `Merging ${result.branch} into ${result.targetBranch} conflicts in ${result.conflicts.join(', ')}.`;
  }
}

/** The text one hydra/agentOutput adds to the agent's output channel. */
export function outputText(params: AgentOutputParams): string {
  const prefix = params.stream === 'stderr' ? '[stderr] ' : '';
  let text = params.lines.map((line) => `${prefix}${line}\n`).join('');
  if (params.droppedLines && params.droppedLines > 0) {
    text += `[hydra: ${params.droppedLines} line(s) left out here; Hydra: Show Agent Output reloads the full log]\n`;
  }
  return text;
}

/** The line an agent's output ends with: how it ended, and the CLI's own words when it failed. */
export function finishedNote(agentId: string, status: string, exitCode: number | null | undefined, error?: string): string {
  const exit = exitCode === null || exitCode === undefined ? '' : `, exit code ${exitCode}`;
  return `[hydra: ${agentId} ${status}${exit}${error ? ': ' + error : ''}]`;
}

/** "1 tool call denied", "3 tool calls denied"; undefined for none. */
export function deniedText(count: number | undefined): string | undefined {
  if (!count || count <= 0) return undefined;
  return `${count} tool call${count === 1 ? '' : 's'} denied`;
}

/**
 * The lines an agent's output ends with after how it ended: the tool calls its
 * CLI refused and the warnings of its run, but for those in `shown` (a
 * transcript has its summary's warnings already). Its stderr is in the output
 * already.
 */
export function finishedDetails(p: { warnings?: string[]; deniedToolCalls?: number }, shown: string[] = []): string[] {
  const denied = deniedText(p.deniedToolCalls);
  return [
    ...(denied ? [`[hydra: ${denied}: it is not merged automatically]`] : []),
    ...(p.warnings ?? []).filter((w) => !shown.includes(w)).map((w) => `[hydra: warning: ${oneLine(w)}]`),
  ];
}

/**
 * What to tell the user of an agent that ended with tool calls denied or
 * warnings (a permission it lacked, a model error, processes hydra had to
 * end); undefined when it ended without either, or was cancelled (the user
 * asked for that, and "cut off by hydra: cancelled" tells them nothing).
 */
export function agentFinishedNotice(
  p: { raceId: string; agentId: string; status?: string; warnings?: string[]; deniedToolCalls?: number },
): string | undefined {
  if (p.status === 'cancelled') return undefined;
  const denied = deniedText(p.deniedToolCalls);
  const warnings = (p.warnings ?? []).map(oneLine);
  if (!denied && warnings.length === 0) return undefined;
  const parts: string[] = [];
  if (denied) parts.push(`had ${denied}, so it is not merged automatically`);
  if (warnings.length > 0) parts.push(`${denied ? 'and warned' : 'warned'}: ${warnings.join('; ')}`);
  // Warnings may quote the agent's own words.
  return visibleControls(`Hydra: ${p.agentId} (race ${p.raceId}) ${parts.join(' ')}`);
}

/**
 * hydra's reason an agent is not available, without the search path it
 * quotes ("'aider' not found on PATH (/usr/bin:/bin)" -> "'aider' not found on
 * PATH"): short enough for a title; the pick's row has it whole.
 */
export function briefProblem(problem: string): string {
  return problem.replace(/ \([^()]*\/[^()]*\)$/, '');
}

/**
 * What to tell the user of a race whose agents run unconfined; undefined when
 * they are confined. The same words for every race (no race id), so that VS
 * Code shows one notification however many races start.
 */
export function unconfinedNotice(p: { sandboxWarning?: string }): string | undefined {
  return p.sandboxWarning ? `Hydra: races run their agents unconfined: ${oneLine(p.sandboxWarning)}` : undefined;
}

/** What to tell the user of an agent that got out of its worktree; undefined when it did not. */
export function escapesMessage(p: { raceId: string; agentId: string; escapes?: string[] }): string | undefined {
  if (!p.escapes || p.escapes.length === 0) return undefined;
  // An escape names the paths the agent chose.
  return visibleControls(`Hydra: ${p.agentId} (race ${p.raceId}) reached outside its worktree and cannot win: ${p.escapes.join('; ')}`);
}

/** "tokens: 400 in, 80 out, 0 cached, $0.0040"; undefined when the usage says nothing. */
export function usageText(usage: Usage | undefined): string | undefined {
  if (!usage) return undefined;
  const tokens: string[] = [];
  if (usage.inputTokens !== undefined) tokens.push(`${usage.inputTokens} in`);
  if (usage.outputTokens !== undefined) tokens.push(`${usage.outputTokens} out`);
  if (usage.cachedInputTokens !== undefined) tokens.push(`${usage.cachedInputTokens} cached`);
  const parts = tokens.length > 0 ? [`tokens: ${tokens.join(', ')}`] : [];
  if (usage.costUsd !== undefined) parts.push(`$${usage.costUsd.toFixed(4)}`);
  return parts.length > 0 ? parts.join(', ') : undefined;
}

function firstLineOf(text: string | undefined): string {
  return (text ?? '').split('\n', 1)[0];
}

/** One event an agent's adapter read, as the lines a person reads; none when it adds nothing. */
export function eventLines(event: AgentEvent): string[] {
  const detail = event.detail ? `: ${firstLineOf(event.detail)}` : '';
  switch (event.kind) {
    case 'text':
      return event.text ? event.text.split('\n') : [];
    case 'toolCall':
      return [`> ${event.tool || 'tool'}${detail}`];
    case 'toolResult':
      return [`  < ${event.tool || 'result'}${event.isError ? ' [error]' : ''}${detail}`];
    case 'fileChange':
      return [`[${event.change || 'change'}] ${event.path ?? ''}`];
    case 'usage': {
      const usage = usageText(event.usage);
      return usage ? [`  (${usage})`] : [];
    }
    case 'error':
      return [`[error] ${event.text ?? ''}`];
    case 'summary': {
      const usage = usageText(event.usage);
      // Nothing beyond "it ended", which how it ended says anyway.
      if (!event.isError && event.turns === undefined && !usage && !event.text && !event.warnings?.length) return [];
      const parts = [event.isError ? 'ended with an error' : 'done'];
      if (event.turns !== undefined) parts.push(`${event.turns} turn(s)`);
      if (usage) parts.push(usage);
      return [
        `[summary] ${parts.join(', ')}`,
        ...(event.warnings ?? []).map((w) => `[warning] ${w}`),
        ...(event.text ? event.text.split('\n') : []),
      ];
    }
    default:
      // raw, and kinds a newer hydra may add: the text as it came.
      return event.text !== undefined ? [event.text] : event.detail !== undefined ? [event.detail] : [];
  }
}

/**
 * The transcript of an agent from its stored events (hydra/agentEvents):
 * its words, `> tool: detail` for each tool call, results (marked when they
 * failed), file changes, errors and its summary. A summary repeating the last
 * message leaves it out; stderr's events are marked.
 */
export function transcriptText(events: AgentEvent[]): string {
  let lastText: string | undefined;
  let text = '';
  for (const event of events) {
    const shown = event.kind === 'summary' && event.text !== undefined && event.text === lastText
      ? { ...event, text: undefined } : event;
    if (event.kind === 'text') lastText = event.text;
    const prefix = event.stream === 'stderr' ? '[stderr] ' : '';
    for (const line of eventLines(shown)) text += `${prefix}${line}\n`;
  }
  return text;
}

/** "failed: cannot win" for an agent that can never win or be merged; undefined for one that can. */
export function ineligibleLabel(ranking: Pick<Ranking, 'eligible' | 'ineligible'> | undefined): string | undefined {
  if (!ranking || ranking.eligible !== false) return undefined;
  return `${ranking.ineligible || 'ineligible'}: cannot win`;
}

/** Text from an agent (a test name, a warning) on one line: its line breaks would break lists and tooltips. */
export function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ');
}

/** How many names of each kind of test change a list shows before "and N more". */
export const TEST_NAMES_SHOWN = 10;

/** The first `max` items and how many more there are: a list of test names can run to thousands. */
export function capItems<T>(items: T[], max: number): { shown: T[]; more: number } {
  return { shown: items.slice(0, Math.max(0, max)), more: Math.max(0, items.length - Math.max(0, max)) };
}

/** "a, b, c and 7 more". */
export function cappedList(items: string[], max: number = TEST_NAMES_SHOWN): string {
  const { shown, more } = capItems(items, max);
  const text = shown.map(oneLine).join(', ');
  return more > 0 ? `${text} and ${more} more` : text;
}

/** The kinds of test changes, in the order they are listed: each kind, what it is called and what it means. */
export const TEST_CHANGE_KINDS: Array<[keyof TestChanges, string, string]> = [
  ['fixed', 'fixed', 'fail → pass'],
  ['broken', 'broken', 'pass → fail'],
  ['removed', 'removed', 'ran at the base, not now'],
  // Marking the failing test xfail is no fix: hydra scores it as failed.
  ['skipped', 'skipped or xfailed now', 'ran at the base; scored as failed'],
];

/** The tests of one kind; none when an older hydra does not send the kind. */
export function testsOfKind(changes: TestChanges, kind: keyof TestChanges): string[] {
  return changes[kind] ?? [];
}

/** "2 fixed (fail → pass): a, b", one line per kind that has tests; none when nothing changed or nothing could be compared. */
export function testChangeLines(changes: TestChanges | undefined, max: number = TEST_NAMES_SHOWN): string[] {
  if (!changes) return [];
  return TEST_CHANGE_KINDS
    .filter(([kind]) => testsOfKind(changes, kind).length > 0)
    .map(([kind, label, meaning]) => {
      const tests = testsOfKind(changes, kind);
      return `${tests.length} ${label} (${meaning}): ${cappedList(tests, max)}`;
    });
}

/** What is said when an agent's tests could not be compared by name with the base's. */
export const COUNTS_ONLY = 'tests compared by counts only';
export const COUNTS_ONLY_WHY = 'the test runner did not name each test, so a deleted test reads as a passing one';

/** "tests compared by counts only: ..." when hydra could not compare the agent's tests by name; undefined otherwise. */
export function countsOnlyText(ranking: Pick<Ranking, 'testChanges' | 'testsByCountsOnly'> | undefined): string | undefined {
  return ranking?.testsByCountsOnly === true && !ranking.testChanges ? `${COUNTS_ONLY}: ${COUNTS_ONLY_WHY}` : undefined;
}

/** "not for auto-merge: 2 tool calls denied; ..." for an agent hydra would not merge by itself; undefined otherwise. */
export function autoMergeLabel(ranking: Pick<Ranking, 'flags'> | undefined): string | undefined {
  const flags = ranking?.flags ?? [];
  return flags.length > 0 ? `not for auto-merge: ${flags.map(oneLine).join('; ')}` : undefined;
}

/** The protected files an agent changed, and what its checks ran with; undefined when it changed none. */
export function protectedText(ranking: Pick<Ranking, 'protectedChanges' | 'protectedMode'> | undefined): string | undefined {
  const files = ranking?.protectedChanges ?? [];
  if (files.length === 0) return undefined;
  const how = ranking?.protectedMode === 'restore'
    ? 'its checks ran with the base versions put back' : 'its checks ran with its versions';
  return `changed protected files: ${cappedList(files)} (${how})`;
}

/** The last `max` lines of an agent's stderr tail; none when it wrote nothing there. */
export function tailLines(tail: string | undefined, max: number): string[] {
  const lines = (tail ?? '').replace(/\n+$/, '').split('\n');
  if (lines.length === 1 && lines[0] === '') return [];
  return lines.slice(-max);
}

/** How many lines of an agent's stderr, and of its warnings, its tooltip shows: enough to say what went wrong, not a wall. */
const TOOLTIP_TAIL_LINES = 5;
const TOOLTIP_WARNINGS = 5;

/**
 * What an agent's tooltip says besides its state: its branch, why it cannot
 * win or be merged automatically, its protected changes, how its tests
 * compare with the base's, its warnings, its error and the end of its stderr.
 */
export function agentTooltip(agent: Partial<AgentState> | undefined, ranking: Ranking | undefined): string {
  const lines: string[] = [];
  if (agent?.branch) lines.push(agent.branch);
  const cannotWin = ineligibleLabel(ranking);
  if (cannotWin) lines.push(cannotWin);
  const notAuto = autoMergeLabel(ranking);
  if (notAuto) lines.push(`⚠ ${notAuto}`);
  const denied = deniedText(agent?.deniedToolCalls);
  // The flags name the denials once the race is scored.
  if (denied && !notAuto) lines.push(`⚠ ${denied}`);
  const protectedFiles = protectedText(ranking);
  if (protectedFiles) lines.push(protectedFiles);
  lines.push(...testChangeLines(ranking?.testChanges, 5).map((l) => `tests ${l}`));
  const countsOnly = countsOnlyText(ranking);
  if (countsOnly) lines.push(countsOnly);
  const warnings = capItems(agent?.warnings ?? [], TOOLTIP_WARNINGS);
  lines.push(...warnings.shown.map((w) => `warning: ${oneLine(w)}`));
  if (warnings.more > 0) lines.push(`and ${warnings.more} more warnings`);
  if (agent?.error) lines.push(agent.error);
  const tail = tailLines(agent?.stderrTail, TOOLTIP_TAIL_LINES);
  if (tail.length > 0) lines.push('stderr (last lines):', ...tail);
  // Test names, warnings, errors and stderr are the agent's text.
  return visibleControls(lines.join('\n'));
}

/** Counts of a check's test cases by outcome. */
export function testCaseCounts(cases: Record<string, string>): { passed: number; failed: number; skipped: number } {
  const counts = { passed: 0, failed: 0, skipped: 0 };
  for (const outcome of Object.values(cases)) {
    if (outcome === 'passed' || outcome === 'failed' || outcome === 'skipped') counts[outcome]++;
  }
  return counts;
}

/** What a race without a winner is said with. */
export const ALL_FAILED = 'All agents failed: no winner';
/** The same for a collaboration, whose builder may well have completed. */
export const NO_GOOD_ROUND = 'No round scored well enough: no result to merge';

/** Why every agent of a race failed, from its rankings (best first). */
export function allFailedReason(rankings: Ranking[]): string {
  const best = rankings.find((r) => r.eligible !== false);
  if (best) return `the best, ${best.agentId}, has ${best.total.toFixed(1)} / 100, below the fail threshold`;
  if (rankings.length > 0) return 'none finished with a change that could be merged';
  return 'no agent was ranked';
}

/**
 * Text that came from an agent (its output, its file names, its messages)
 * with its control characters made visible, as the CLI shows them
 * (core/util/terminal_text.h): C0 controls but newline and tab in caret
 * notation (ESC "^[", BEL "^G", CR "^M"), DEL "^?", the C1 controls as
 * "\u009b". A sequence an agent printed (a clipboard write, a title, a
 * link) is then shown as what it is and drives nothing.
 */
export function visibleControls(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => {
    const code = c.charCodeAt(0);
    if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`;
    if (code === 0x7f) return '^?';
    return `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * An agent's text for a terminal (outputTerminals.ts): every control
 * character made visible (visibleControls: an escape sequence drives
 * nothing, a carriage return rewrites no line), then each line ended with
 * \r\n, as a terminal needs to start the next line at its left edge.
 */
export function terminalText(text: string): string {
  return visibleControls(text).replace(/\n/g, '\r\n');
}

/** Escapes text for HTML element content and attribute values; control characters are made visible. */
export function escapeHtml(text: string): string {
  return visibleControls(text)
    .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** Why a check failed; undefined when it passed, was skipped or is not configured. */
export function checkFailure(check: CheckResult | null | undefined): string | undefined {
  if (!check || check.skipped) return undefined;
  if (check.timedOut) return 'timed out';
  if (check.error) return `could not run: ${check.error}`;
  if (check.exitCode === null) return `failed (killed by signal ${check.signal ?? '?'})`;
  if (check.exitCode !== 0) return `failed (exit ${check.exitCode})`;
  return undefined;
}

/**
 * What speaks against merging `agentId`, as phrases ("its build failed (exit
 * 2)"); empty when nothing does. `scores` is hydra/scores' answer, undefined
 * when the race was not scored.
 */
export function mergeConcerns(scores: ScoresResult | undefined, agentId: string): string[] {
  if (!scores) return ['the race was not scored: nothing checked its work'];
  const ranking = scores.rankings.find((r) => r.agentId === agentId);
  if (!ranking) return ['it was not ranked: nothing checked its work'];
  const out: string[] = [];
  if (ranking.eligible === false) out.push(`it cannot win or be merged: ${ranking.ineligible || 'ineligible'}`);
  if (ranking.rank !== 1) {
    const best = scores.rankings.find((r) => r.rank === 1);
    out.push(`it ranked #${ranking.rank} of ${scores.rankings.length} (${ranking.total.toFixed(1)} / 100${
      best ? `; the winner, ${best.agentId}, has ${best.total.toFixed(1)}` : ''})`);
  }
  if (scores.allFailed) out.push('every agent failed: even the best total is below the fail threshold');
  if (ranking.status !== 'completed') out.push(`the agent ended ${ranking.status}, not completed`);
  const build = checkFailure(ranking.checks.build);
  if (build) out.push(`its build ${build}`);
  const tests = ranking.checks.tests;
  if (tests?.tests && tests.tests.failed > 0) {
    out.push(`${tests.tests.failed} of ${tests.tests.passed + tests.tests.failed} tests failed`);
  } else if (tests?.skipped) {
    out.push('its tests did not run (skipped: the build failed)');
  } else {
    const why = checkFailure(tests);
    if (why) out.push(`its tests ${why}`);
  }
  const changes = ranking.testChanges;
  if (changes?.broken?.length) {
    out.push(`it broke ${changes.broken.length} test(s) that passed at the base: ${cappedList(changes.broken, 5)}`);
  }
  if (changes?.removed?.length) {
    out.push(`${changes.removed.length} test(s) that ran at the base did not run: ${cappedList(changes.removed, 5)}`);
  }
  if (changes?.skipped?.length) {
    out.push(`${changes.skipped.length} test(s) that ran at the base are skipped or xfailed now (scored as failed): ${
      cappedList(changes.skipped, 5)}`);
  }
  // Without names a deleted test reads as a passing one: the user should know before merging.
  // Flags do not stop a manual merge, but they are why hydra would not make it.
  if (ranking.flags?.length) out.push(`hydra would not merge it by itself: ${ranking.flags.map(oneLine).join('; ')}`);
  // Without names a deleted test reads as a passing one: said beside the
  // concerns, not one by itself (hydra merges such a winner unasked too; the
  // tooltip and the scoreboard card say it).
  const countsOnly = countsOnlyText(ranking);
  if (countsOnly && out.length > 0) out.push(countsOnly);
  return out;
}

/**
 * What the scoreboard says of the winner's merge. Only when hydra says
 * `[scoring] auto_merge` is on (`autoMergeEnabled`) does it speak of merging
 * automatically; otherwise, or from a hydra that does not say, it says what is
 * true either way. `flagged`: the winner has flags, whose badge says why it is
 * not merged automatically.
 */
export function winnerMergeNote(
  scores: { autoMergeEligible: boolean; autoMergeEnabled?: boolean }, flagged: boolean,
): string | undefined {
  if (scores.autoMergeEnabled === true) {
    if (scores.autoMergeEligible) return 'good enough to merge automatically (auto_merge is on)';
    return flagged ? undefined : 'below auto_merge_minimum: not merged automatically';
  }
  return 'eligible to merge';
}

/** What to tell the user of what `[scoring] auto_merge` did when their race ended; undefined when it did nothing. */
export function autoMergeNotice(p: RaceFinishedParams): { severity: 'info' | 'warning'; message: string } | undefined {
  const m = p.autoMerge;
  if (!m) return undefined;
  const into = m.targetBranch ?? 'your branch';
  switch (m.outcome) {
    case 'fastForward':
    case 'merged':
      return {
        severity: 'info',
        message: `Hydra: auto_merge merged ${m.agentId}, the winner of race ${p.raceId}, into ${into}${
          m.commit ? ` (now at ${m.commit.slice(0, 8)})` : ''}.`,
      };
    case 'upToDate':
      return { severity: 'info', message: `Hydra: ${into} already contains ${m.agentId}, the winner of race ${p.raceId}: auto_merge had nothing to merge.` };
    case 'conflict':
      return {
        severity: 'warning',
        message: `Hydra: auto_merge did not merge ${m.agentId}, the winner of race ${p.raceId}: it conflicts in ${
          cappedList(m.conflicts ?? [], 5) || 'some files'}; nothing was changed.`,
      };
    default:
      return {
        severity: 'warning',
        message: `Hydra: auto_merge did not merge ${m.agentId}, the winner of race ${p.raceId}${m.error ? `: ${oneLine(m.error)}` : ''}.`,
      };
  }
}

/** What to tell the user when a race of theirs ends; undefined when the scoreboard says it all. */
export function raceOutcome(p: RaceFinishedParams): { severity: 'warning' | 'error'; message: string } | undefined {
  // A race in which no agent completed is recorded as failed, and scored all the same.
  if (p.allFailed && p.rankings.length > 0) {
    return { severity: 'warning', message: `Hydra: ${ALL_FAILED} in race ${p.raceId} (${allFailedReason(p.rankings)}).` };
  }
  if (p.status === 'failed' || p.status === 'interrupted') {
    return { severity: 'error', message: `Hydra: race ${p.raceId} ${p.status} before it was scored.` };
  }
  if (p.status !== 'completed') return undefined; // cancelled: the user asked for it
  if (p.allFailed) {
    return { severity: 'warning', message: `Hydra: ${ALL_FAILED} in race ${p.raceId} (${allFailedReason(p.rankings)}).` };
  }
  if (!p.winner) return { severity: 'warning', message: `Hydra: race ${p.raceId} has no winner: no agent was ranked.` };
  return undefined;
}

/** A window/showMessage hydra sent, numbered in the order it came. */
export interface HydraMessage {
  type: number;
  message: string;
  seq: number;
}

/**
 * The latest of hydra's window/showMessage that said what a request's error
 * says (hydra's messages repeat the error's message, sometimes with more after
 * it); undefined when none did.
 */
export function messageFor(error: unknown, messages: HydraMessage[]): HydraMessage | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const message = (error as { message?: unknown }).message;
  if (typeof message !== 'string' || message === '') return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i].message;
    if (m.startsWith(message) || message.startsWith(m)) return messages[i];
  }
  return undefined;
}

/** Agent ids in rank order (unranked ones last, in the order given). */
export function rankOrder(ids: string[], rankOf: (id: string) => number | undefined): string[] {
  const at = (id: string) => rankOf(id) ?? Number.POSITIVE_INFINITY;
  return ids.map((id, i) => ({ id, i })).sort((a, b) => at(a.id) - at(b.id) || a.i - b.i).map((e) => e.id);
}

/** Agents (or a collaboration's iterations) in rank order: unranked ones last, in the order given. */
export function byRank<T extends { agentId: string }>(agents: T[], rankOf: (id: string) => number | undefined): T[] {
  const at = new Map(agents.map((a) => [a.agentId, a]));
  return rankOrder(agents.map((a) => a.agentId), rankOf).map((id) => at.get(id) as T);
}

/** An agent in a pick: "completed · 4.2s · #1 · 91.0 · winner", its rank once the race is scored. */
export function agentPickDescription(
  state: string, elapsedMs: number, ranking: Pick<Ranking, 'rank' | 'total'> | undefined, winner: boolean,
): string {
  const parts = [state, formatElapsed(elapsedMs)];
  if (ranking) parts.push(`#${ranking.rank} · ${ranking.total.toFixed(1)}${winner ? ' · winner' : ''}`);
  return parts.join(' · ');
}
