import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  agentPickDescription, agentStateIcon, alreadyMergedAgent, byRank, mergedDetail, mergedText, agentFinishedNotice, agentTooltip, autoMergeLabel, autoMergeNotice, briefProblem, cappedList, deniedText, describeDryRun, describeServerError,
  escapeHtml, escapesMessage, finishedDetails, finishedNote, formatElapsed, formatPartScore, formatTotal, ineligibleLabel, mergeConcerns, messageFor, oneLine,
  outputText, plainState, protectedText, raceOutcome, rankOrder, refusedAgent, replaceAgent, scoreBand, tailLines, testCaseCounts,
  countsOnlyText, testChangeLines, transcriptText, terminalText, unconfinedNotice, usageText, visibleControls, winnerMergeNote,
} from '../../src/format';
import type { AgentEvent, AgentStateName, Ranking, ScoresResult } from '../../src/protocol';

test('scoreBand is green above 80, yellow from 50 to 80, red below 50', () => {
  assert.equal(scoreBand(100), 'good');
  assert.equal(scoreBand(80.1), 'good');
  assert.equal(scoreBand(80), 'fair');
  assert.equal(scoreBand(50), 'fair');
  assert.equal(scoreBand(49.9), 'poor');
  assert.equal(scoreBand(0), 'poor');
  assert.equal(scoreBand(null), 'none');
});

test('scores read as the CLI shows them, never higher than they are', () => {
  assert.equal(formatPartScore(100), '100');
  assert.equal(formatPartScore(99.7), '99');
  assert.equal(formatPartScore(99.4), '99');
  assert.equal(formatPartScore(71.4), '71');
  assert.equal(formatPartScore(0), '0');
  assert.equal(formatTotal(100), '100.0');
  assert.equal(formatTotal(99.96), '99.9');
  assert.equal(formatTotal(97.14), '97.1');
});

test('formatElapsed picks the unit by size', () => {
  assert.equal(formatElapsed(850), '850ms');
  assert.equal(formatElapsed(4200), '4.2s');
  assert.equal(formatElapsed(65_000), '1m 05s');
  assert.equal(formatElapsed(3_720_000), '1h 02m');
});

test('describeServerError keeps the server message and names what data lists', () => {
  assert.equal(
    describeServerError({ code: -32012, message: "no agent named 'gpt'", data: { agent: 'gpt', known: ['fixer', 'claude'] } }),
    "no agent named 'gpt' (known agents: fixer, claude)");
  assert.equal(
    describeServerError({ code: -32014, message: 'merge refused: uncommitted changes', data: { reason: 'dirty', files: ['a.txt'] } }),
    'merge refused: uncommitted changes (files: a.txt)');
  assert.equal(
    describeServerError({ code: -32019, message: 'hydra.toml is broken', data: { file: 'hydra.toml', line: 3, column: 7 } }),
    'hydra.toml is broken (hydra.toml:3:7)');
  assert.equal(
    describeServerError({ code: -32019, message: 'hydra.toml is broken: /r/hydra.toml:2:25: expected value', data: { file: '/r/hydra.toml', line: 2, column: 25 } }),
    'hydra.toml is broken: /r/hydra.toml:2:25: expected value');
  assert.equal(describeServerError({ code: -32010, message: 'no such race', data: { raceId: 'x' } }), 'no such race');
  assert.equal(describeServerError(new Error('pipe closed')), 'pipe closed');
});

// hydra/race's refusals as the real hydra words them (recorded from hydra serve).
const known = ['breaker', 'crasher', 'fixer', 'narrator', 'claude', 'codex', 'cursor', 'gemini', 'opencode', 'aider'];
const unknownAgent = {
  code: -32012,
  message: `unknown agent 'breakr'; did you mean 'breaker'? (known: ${known.join(', ')}; add an [agents.breakr] table to hydra.toml to define it)`,
  data: { agent: 'breakr', known, suggestion: 'breaker' },
};
const unavailableAgent = {
  code: -32022,
  message: "agent 'aider' cannot run here: 'aider' not found on PATH (/usr/bin:/bin)",
  data: { agent: 'aider', problem: "'aider' not found on PATH (/usr/bin:/bin)" },
};

test('describeServerError says what the data adds to the message, never twice', () => {
  // hydra names the known agents and the suggestion itself: nothing is repeated.
  assert.equal(describeServerError(unknownAgent), unknownAgent.message);
  assert.equal(describeServerError(unavailableAgent), unavailableAgent.message);
  // A message that leaves them out gets them from the data.
  assert.equal(describeServerError({ code: -32012, message: "unknown agent 'breakr'", data: unknownAgent.data }),
    `unknown agent 'breakr' (did you mean 'breaker'?; known agents: ${known.join(', ')})`);
  assert.equal(describeServerError({ code: -32022, message: "agent 'aider' cannot run here", data: unavailableAgent.data }),
    "agent 'aider' cannot run here ('aider' not found on PATH (/usr/bin:/bin))");
  assert.equal(
    describeServerError({ code: -32014, message: 'merge refused: would overwrite a.txt, b.txt', data: { reason: 'dirty', files: ['a.txt', 'b.txt'] } }),
    'merge refused: would overwrite a.txt, b.txt');
});

test('refusedAgent names the agent hydra refused and the name it suggests', () => {
  assert.deepEqual(refusedAgent(unknownAgent), { agent: 'breakr', suggestion: 'breaker' });
  assert.deepEqual(refusedAgent(unavailableAgent), { agent: 'aider', suggestion: undefined });
  assert.equal(refusedAgent({ code: -32019, message: 'hydra.toml is broken', data: { file: 'hydra.toml' } }), undefined);
  assert.equal(refusedAgent(new Error('pipe closed')), undefined);
  assert.deepEqual(replaceAgent(['fixer', 'breakr', 'breakr'], 'breakr', 'breaker'), ['fixer', 'breaker', 'breaker']);
});

test('describeDryRun says what the merge would do', () => {
  const base = { agentId: 'fixer', branch: 'hydra/fixer-1', targetBranch: 'main', dryRun: true, conflicts: [], cleanedUp: false };
  assert.equal(describeDryRun({ ...base, outcome: 'fastForward', files: ['lib.sh', 'CHANGELOG.md'] }),
    'Fast-forward main to hydra/fixer-1 (2 files: lib.sh, CHANGELOG.md).');
  assert.equal(describeDryRun({ ...base, outcome: 'conflict', files: [], conflicts: ['lib.sh'] }),
    'Merging hydra/fixer-1 into main conflicts in lib.sh.');
  assert.match(describeDryRun({ ...base, outcome: 'upToDate', files: [] }), /already contains/);
});

test('outputText writes one line per line, marks stderr and counts dropped lines', () => {
  assert.equal(outputText({ raceId: 'r', agentId: 'a', stream: 'stdout', lines: ['one', 'two'], events: [] }), 'one\ntwo\n');
  assert.equal(outputText({ raceId: 'r', agentId: 'a', stream: 'stderr', lines: ['oops'], events: [] }), '[stderr] oops\n');
  assert.match(outputText({ raceId: 'r', agentId: 'a', stream: 'stdout', lines: [], events: [], droppedLines: 12 }),
    /12 line\(s\) left out/);
});

test('escapeHtml leaves no markup through', () => {
  assert.equal(escapeHtml(`<img src=x onerror="a('b')">&`), '&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;');
});

test('mergeConcerns: none for the winner, rank and failed checks for the others', () => {
  const scores: ScoresResult = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../test/unit/fixtures/scores.json'), 'utf8'));
  assert.deepEqual(mergeConcerns(scores, 'fixer'), []);
  const [winner, breaker] = scores.rankings;
  assert.deepEqual(mergeConcerns(scores, 'breaker'), [
    `it ranked #2 of 2 (${breaker.total.toFixed(1)} / 100; the winner, fixer, has ${winner.total.toFixed(1)})`,
    'its build failed (exit 2)',
    'its tests did not run (skipped: the build failed)',
  ]);
  // Every agent failed: even the winner is not a safe pick.
  assert.deepEqual(mergeConcerns({ ...scores, allFailed: true }, 'fixer'),
    ['every agent failed: even the best total is below the fail threshold']);
  const failingTests = {
    ...scores,
    rankings: [{ ...winner, checks: { ...winner.checks, tests: { ...winner.checks.tests!, exitCode: 1, tests: { passed: 3, failed: 1, skipped: 0 } } } }],
  };
  assert.deepEqual(mergeConcerns(failingTests, 'fixer'), ['1 of 4 tests failed']);
  assert.deepEqual(mergeConcerns(undefined, 'fixer'), ['the race was not scored: nothing checked its work']);
  const timedOut = { ...scores, rankings: [winner, { ...breaker, eligible: false, ineligible: 'timed out' }] };
  assert.equal(mergeConcerns(timedOut, 'breaker')[0], 'it cannot win or be merged: timed out');
  assert.deepEqual(mergeConcerns(scores, 'nobody'), ['it was not ranked: nothing checked its work']);
});

test('raceOutcome speaks up when every agent failed or the race broke, not when there is a winner', () => {
  const scores: ScoresResult = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../test/unit/fixtures/scores.json'), 'utf8'));
  const finished = { raceId: 'r1', status: 'completed' as const, rankings: scores.rankings, winner: 'fixer', autoMergeEligible: true, allFailed: false };
  assert.equal(raceOutcome(finished), undefined);
  const failed = raceOutcome({ ...finished, rankings: [scores.rankings[1]], winner: null, allFailed: true });
  assert.equal(failed?.severity, 'warning');
  assert.match(failed?.message ?? '',
    /^Hydra: All agents failed: no winner in race r1 \(the best, breaker, has \d+\.\d \/ 100, below the fail threshold\)\.$/);
  // No agent could win at all: it failed, or changed nothing.
  const none = raceOutcome({
    ...finished, winner: null, allFailed: true,
    rankings: [{ ...scores.rankings[0], eligible: false, ineligible: 'failed' }, { ...scores.rankings[1], eligible: false, ineligible: 'changed nothing' }],
  });
  assert.equal(none?.message, 'Hydra: All agents failed: no winner in race r1 (none finished with a change that could be merged).');
  // No agent completed: hydra records the race as failed, scored all the same.
  assert.equal(raceOutcome({ ...finished, status: 'failed', winner: null, allFailed: true,
    rankings: [{ ...scores.rankings[0], eligible: false, ineligible: 'failed' }] })?.message,
  'Hydra: All agents failed: no winner in race r1 (none finished with a change that could be merged).');
  assert.equal(raceOutcome({ ...finished, status: 'interrupted', rankings: [], winner: null })?.severity, 'error');
  assert.equal(raceOutcome({ ...finished, status: 'cancelled', rankings: [], winner: null }), undefined);
});

test('messageFor finds what hydra already said with window/showMessage, the latest first', () => {
  const error = { code: -32019, message: 'hydra.toml is broken: /r/hydra.toml:2:25: expected value' };
  const said = (message: string, seq: number) => ({ type: 1, message, seq });
  assert.deepEqual(messageFor(error, [said('hydra.toml is broken: /r/hydra.toml:2:25: expected value', 0)]),
    said('hydra.toml is broken: /r/hydra.toml:2:25: expected value', 0));
  const twice = [
    said('hydra.toml is broken: /r/hydra.toml:2:25: expected value (races cannot start until it is fixed)', 3),
    said('merging hydra/fixer-1 into main conflicts in 1 file(s): lib.sh; nothing was changed', 4),
    said('hydra.toml is broken: /r/hydra.toml:2:25: expected value (races cannot start until it is fixed)', 7),
  ];
  assert.equal(messageFor(error, twice)?.seq, 7);
  assert.equal(messageFor(error, []), undefined);
  assert.equal(messageFor(error, [said('hydra.toml is broken: /r/hydra.toml:9:1: another problem', 1)]), undefined);
  assert.equal(messageFor(new Error(''), [said('anything', 1)]), undefined);
});

test('rankOrder puts agents by rank, unranked ones last in their order', () => {
  const ranks: Record<string, number> = { fixer: 1, breaker: 2 };
  assert.deepEqual(rankOrder(['breaker', 'fixer', 'sleeper', 'other'], (id) => ranks[id]), ['fixer', 'breaker', 'sleeper', 'other']);
});

test('byRank lists agents by rank, not by name, and the unranked ones after them in hydra\'s order', () => {
  const ranks: Record<string, number> = { sprawler: 1, careful: 2, 'builder@2': 1, 'builder@1': 2 };
  const agents = ['aardvark', 'careful', 'sprawler', 'zebra'].map((agentId) => ({ agentId, state: 'completed' }));
  assert.deepEqual(byRank(agents, (id) => ranks[id]).map((a) => a.agentId), ['sprawler', 'careful', 'aardvark', 'zebra']);
  assert.equal(byRank(agents, (id) => ranks[id])[0], agents[2]);
  assert.deepEqual(byRank([{ agentId: 'builder@1' }, { agentId: 'builder@2' }], (id) => ranks[id]).map((a) => a.agentId),
    ['builder@2', 'builder@1']);
  assert.deepEqual(byRank(agents, () => undefined), agents);
});

test('an agent in a pick says its rank and score once the race is scored, and which one won', () => {
  assert.equal(agentPickDescription('running', 4200, undefined, false), 'running · 4.2s');
  assert.equal(agentPickDescription('completed', 65_000, { rank: 1, total: 91.04 }, true), 'completed · 1m 05s · #1 · 91.0 · winner');
  assert.equal(agentPickDescription('failed', 850, { rank: 3, total: 0 }, false), 'failed · 850ms · #3 · 0.0');
});

test('ineligibleLabel marks an agent that cannot win, and only such an agent', () => {
  assert.equal(ineligibleLabel({ eligible: false, ineligible: 'failed' }), 'failed: cannot win');
  assert.equal(ineligibleLabel({ eligible: false, ineligible: 'changed nothing' }), 'changed nothing: cannot win');
  assert.equal(ineligibleLabel({ eligible: true }), undefined);
  assert.equal(ineligibleLabel(undefined), undefined);
});

test('escapesMessage names what an agent did outside its worktree, and nothing for one that stayed in', () => {
  assert.equal(escapesMessage({ raceId: 'r1', agentId: 'fixer' }), undefined);
  assert.equal(escapesMessage({ raceId: 'r1', agentId: 'fixer', escapes: [] }), undefined);
  assert.equal(
    escapesMessage({ raceId: 'r1', agentId: 'evil', escapes: ['refs/heads/main moved from 3f2a9c1 to 8e01b44 (put back)', 'changed hydra\'s record .hydra/earlier.json'] }),
    "Hydra: evil (race r1) reached outside its worktree and cannot win: refs/heads/main moved from 3f2a9c1 to 8e01b44 (put back); changed hydra's record .hydra/earlier.json");
});

test('finishedNote says how an agent ended, with its error', () => {
  assert.equal(finishedNote('fixer', 'completed', 0), '[hydra: fixer completed, exit code 0]');
  assert.equal(finishedNote('crasher', 'failed', 3, 'exited with code 3: quota exceeded'),
    '[hydra: crasher failed, exit code 3: exited with code 3: quota exceeded]');
  assert.equal(finishedNote('slow', 'timedOut', null, 'timed out after 60 s'), '[hydra: slow timedOut: timed out after 60 s]');
});

test('usageText names tokens and cost, nothing when there is nothing', () => {
  assert.equal(usageText({ inputTokens: 400, outputTokens: 80, cachedInputTokens: 0, costUsd: 0.004 }),
    'tokens: 400 in, 80 out, 0 cached, $0.0040');
  assert.equal(usageText({ costUsd: 1.5 }), '$1.5000');
  assert.equal(usageText({}), undefined);
  assert.equal(usageText(undefined), undefined);
});

test('transcriptText reads like a session: words, tool calls, results, changes, errors, the summary', () => {
  const events: AgentEvent[] = [
    { kind: 'text', text: "I'll fix add().", stream: 'stdout' },
    { kind: 'toolCall', tool: 'Edit', detail: 'lib.sh\nwith more', stream: 'stdout' },
    { kind: 'toolResult', tool: 'Edit', detail: 'updated', stream: 'stdout' },
    { kind: 'fileChange', path: 'lib.sh', change: 'update', stream: 'stdout' },
    { kind: 'toolCall', tool: 'Bash', detail: 'make test', stream: 'stdout' },
    { kind: 'toolResult', tool: 'Bash', detail: 'make: not found', isError: true, stream: 'stdout' },
    { kind: 'usage', usage: { inputTokens: 10, outputTokens: 2 }, stream: 'stdout' },
    { kind: 'error', text: 'rate limited', stream: 'stderr' },
    { kind: 'text', text: 'Done: add() adds.', stream: 'stdout' },
    {
      kind: 'summary', text: 'Done: add() adds.', turns: 3, usage: { inputTokens: 400, outputTokens: 80, costUsd: 0.004 },
      warnings: ['permission denied: Write /etc/passwd'], stream: 'stdout',
    },
  ];
  assert.equal(transcriptText(events), [
    "I'll fix add().",
    '> Edit: lib.sh',
    '  < Edit: updated',
    '[update] lib.sh',
    '> Bash: make test',
    '  < Bash [error]: make: not found',
    '  (tokens: 10 in, 2 out)',
    '[stderr] [error] rate limited',
    'Done: add() adds.',
    // The final message is not said twice.
    '[summary] done, 3 turn(s), tokens: 400 in, 80 out, $0.0040',
    '[warning] permission denied: Write /etc/passwd',
    '',
  ].join('\n'));
  assert.equal(transcriptText([{ kind: 'summary', isError: true, text: 'the model is overloaded' }]),
    '[summary] ended with an error\nthe model is overloaded\n');
  // A plain command's adapter reads nothing but the end of the run: no transcript.
  assert.equal(transcriptText([{ kind: 'summary', isError: false }]), '');
  assert.equal(transcriptText([]), '');
});

const fixture = (): ScoresResult => JSON.parse(fs.readFileSync(path.join(__dirname, '../../../test/unit/fixtures/scores.json'), 'utf8'));

test('cappedList names the first ones and counts the rest, each on one line', () => {
  assert.equal(cappedList([]), '');
  assert.equal(cappedList(['a', 'b']), 'a, b');
  assert.equal(cappedList(['a', 'b', 'c', 'd'], 2), 'a, b and 2 more');
  assert.equal(cappedList(Array.from({ length: 12 }, (_, i) => `t${i}`)), 't0, t1, t2, t3, t4, t5, t6, t7, t8, t9 and 2 more');
  assert.equal(cappedList(['test with\nnewline\r\n  inside']), 'test with newline inside');
  assert.equal(oneLine('one\ntwo'), 'one two');
});

test('testChangeLines says what was fixed, broken and removed, only the kinds that have tests', () => {
  assert.deepEqual(testChangeLines(undefined), []);
  assert.deepEqual(testChangeLines({ fixed: [], broken: [], removed: [] }), []);
  assert.deepEqual(testChangeLines({ fixed: ['test_sum', 'test_neg'], broken: ['test_div'], removed: ['a', 'b', 'c'] }, 2), [
    '2 fixed (fail → pass): test_sum, test_neg',
    '1 broken (pass → fail): test_div',
    '3 removed (ran at the base, not now): a, b and 1 more',
  ]);
});

test('testChangeLines names tests skipped or xfailed now as scored as failed; an older hydra without the kind lists none', () => {
  assert.deepEqual(testChangeLines({ fixed: [], broken: [], removed: [], skipped: ['tests/test_calc.py::test_sub', 'test_x', 'test_y'] }, 2), [
    '3 skipped or xfailed now (ran at the base; scored as failed): tests/test_calc.py::test_sub, test_x and 1 more',
  ]);
  assert.deepEqual(testChangeLines({ fixed: ['t'], broken: [], removed: [] }), ['1 fixed (fail → pass): t']);
});

test('countsOnlyText says when tests were compared by counts only, and only then', () => {
  const said = 'tests compared by counts only: the test runner did not name each test, so a deleted test reads as a passing one';
  assert.equal(countsOnlyText({ testsByCountsOnly: true }), said);
  assert.equal(countsOnlyText({ testsByCountsOnly: false }), undefined);
  assert.equal(countsOnlyText({}), undefined);
  assert.equal(countsOnlyText(undefined), undefined);
  const [winner] = fixture().rankings;
  // Names were compared after all: the lists say what changed.
  assert.equal(countsOnlyText({ testsByCountsOnly: true, testChanges: { fixed: [], broken: [], removed: [] } }), undefined);
  assert.equal(agentTooltip({ branch: 'b' }, { ...winner, testsByCountsOnly: true }), `b\n${said}`);
  assert.equal(agentTooltip({ branch: 'b' }, { ...winner, testChanges: { fixed: [], broken: [], removed: [], skipped: ['test_sub'] } }),
    'b\ntests 1 skipped or xfailed now (ran at the base; scored as failed): test_sub');
});

test('autoMergeLabel and protectedText say why hydra would not merge an agent by itself', () => {
  assert.equal(autoMergeLabel(undefined), undefined);
  assert.equal(autoMergeLabel({ flags: [] }), undefined);
  assert.equal(autoMergeLabel({ flags: ['2 tool calls denied', 'changed protected files: tests/conftest.py'] }),
    'not for auto-merge: 2 tool calls denied; changed protected files: tests/conftest.py');
  assert.equal(protectedText({}), undefined);
  assert.equal(protectedText({ protectedChanges: ['tests/conftest.py'], protectedMode: 'restore' }),
    'changed protected files: tests/conftest.py (its checks ran with the base versions put back)');
  assert.equal(protectedText({ protectedChanges: ['tests/conftest.py', 'ci.yml'], protectedMode: 'flag' }),
    'changed protected files: tests/conftest.py, ci.yml (its checks ran with its versions)');
});

test('deniedText, finishedDetails and agentFinishedNotice speak of denied tool calls and warnings only when there are some', () => {
  assert.equal(deniedText(undefined), undefined);
  assert.equal(deniedText(0), undefined);
  assert.equal(deniedText(1), '1 tool call denied');
  assert.equal(deniedText(3), '3 tool calls denied');
  assert.deepEqual(finishedDetails({}), []);
  assert.deepEqual(finishedDetails({ deniedToolCalls: 2, warnings: ['permission denied: Write /etc/passwd', 'model\nerror'] }), [
    '[hydra: 2 tool calls denied: it is not merged automatically]',
    '[hydra: warning: permission denied: Write /etc/passwd]',
    '[hydra: warning: model error]',
  ]);
  // A transcript shows its summary's warnings already.
  assert.deepEqual(finishedDetails({ warnings: ['permission denied: Write /etc/passwd', 'left a process running'] }, ['permission denied: Write /etc/passwd']),
    ['[hydra: warning: left a process running]']);
  assert.equal(agentFinishedNotice({ raceId: 'r1', agentId: 'fixer' }), undefined);
  assert.equal(agentFinishedNotice({ raceId: 'r1', agentId: 'fixer', warnings: [], deniedToolCalls: 0 }), undefined);
  assert.equal(agentFinishedNotice({ raceId: 'r1', agentId: 'fixer', deniedToolCalls: 2, warnings: ['permission denied: Bash rm -rf /'] }),
    'Hydra: fixer (race r1) had 2 tool calls denied, so it is not merged automatically and warned: permission denied: Bash rm -rf /');
  assert.equal(agentFinishedNotice({ raceId: 'r1', agentId: 'fixer', warnings: ['the model is overloaded'] }),
    'Hydra: fixer (race r1) warned: the model is overloaded');
  assert.equal(agentFinishedNotice({ raceId: 'r1', agentId: 'fixer', status: 'cancelled', warnings: ['cut off by hydra: cancelled'] }), undefined);
});

test('tailLines keeps the last lines of a stderr tail', () => {
  assert.deepEqual(tailLines(undefined, 5), []);
  assert.deepEqual(tailLines('', 5), []);
  assert.deepEqual(tailLines('a\nb\nc\n', 2), ['b', 'c']);
  assert.deepEqual(tailLines('only', 5), ['only']);
});

test('testCaseCounts counts test cases by outcome', () => {
  assert.deepEqual(testCaseCounts({}), { passed: 0, failed: 0, skipped: 0 });
  assert.deepEqual(testCaseCounts({ a: 'passed', b: 'failed', c: 'passed', d: 'skipped' }), { passed: 2, failed: 1, skipped: 1 });
});

test("agentTooltip lists an agent's branch, marks, protected files, test changes, warnings, error and stderr's last lines", () => {
  const [winner] = fixture().rankings;
  const ranking: Ranking = {
    ...winner,
    flags: ['1 tool call denied'],
    protectedChanges: ['tests/conftest.py'],
    protectedMode: 'restore',
    testChanges: { fixed: ['test_sum'], broken: Array.from({ length: 7 }, (_, i) => `test_${i}`), removed: [] },
  };
  const agent = {
    branch: 'hydra/fixer-x', error: 'exited with code 1', warnings: ['permission denied: Write /etc/passwd'], deniedToolCalls: 1,
    stderrTail: 'l1\nl2\nl3\nl4\nl5\nl6\nl7',
  };
  assert.equal(agentTooltip(agent, ranking), [
    'hydra/fixer-x',
    '⚠ not for auto-merge: 1 tool call denied',
    'changed protected files: tests/conftest.py (its checks ran with the base versions put back)',
    'tests 1 fixed (fail → pass): test_sum',
    'tests 7 broken (pass → fail): test_0, test_1, test_2, test_3, test_4 and 2 more',
    'warning: permission denied: Write /etc/passwd',
    'exited with code 1',
    'stderr (last lines):',
    'l3', 'l4', 'l5', 'l6', 'l7',
  ].join('\n'));
  // Before the race is scored, its denials are what it has.
  assert.equal(agentTooltip({ branch: 'b', deniedToolCalls: 2 }, undefined), 'b\n⚠ 2 tool calls denied');
  assert.equal(agentTooltip({ branch: 'b' }, { ...winner, eligible: false, ineligible: 'failed' }), 'b\nfailed: cannot win');
  assert.equal(agentTooltip(undefined, undefined), '');
  assert.equal(agentTooltip({ warnings: ['a', 'b', 'c', 'd', 'e', 'f', 'g'] }, undefined),
    'warning: a\nwarning: b\nwarning: c\nwarning: d\nwarning: e\nand 2 more warnings');
});

test('mergeConcerns names broken and removed tests and the flags that keep hydra from merging by itself', () => {
  const scores = fixture();
  const [winner, breaker] = scores.rankings;
  const flagged = {
    ...scores,
    rankings: [{
      ...winner,
      testChanges: { fixed: ['test_sum'], broken: ['test_a', 'test_b'], removed: ['test_c'] },
      flags: ['2 tool calls denied', 'changed protected files: tests/conftest.py'],
    }, breaker],
  };
  assert.deepEqual(mergeConcerns(flagged, 'fixer'), [
    'it broke 2 test(s) that passed at the base: test_a, test_b',
    '1 test(s) that ran at the base did not run: test_c',
    'hydra would not merge it by itself: 2 tool calls denied; changed protected files: tests/conftest.py',
  ]);
  // Fixed tests are no concern.
  assert.deepEqual(mergeConcerns({ ...scores, rankings: [{ ...winner, testChanges: { fixed: ['t'], broken: [], removed: [] } }, breaker] }, 'fixer'), []);
});

test('mergeConcerns names tests skipped or xfailed now and says when tests were compared by counts only', () => {
  const scores = fixture();
  const [winner, breaker] = scores.rankings;
  const xfailer = { ...winner, testChanges: { fixed: [], broken: [], removed: [], skipped: ['tests/test_calc.py::test_sub'] } };
  assert.deepEqual(mergeConcerns({ ...scores, rankings: [xfailer, breaker] }, 'fixer'), [
    '1 test(s) that ran at the base are skipped or xfailed now (scored as failed): tests/test_calc.py::test_sub',
  ]);
  // Beside another concern it is said; alone it asks nothing.
  assert.deepEqual(mergeConcerns({ ...scores, rankings: [{ ...winner, testsByCountsOnly: true }, breaker] }, 'fixer'), []);
  const flagged = { ...winner, testsByCountsOnly: true, flags: ['changed protected files: conftest.py'] };
  assert.deepEqual(mergeConcerns({ ...scores, rankings: [flagged, breaker] }, 'fixer'), [
    'hydra would not merge it by itself: changed protected files: conftest.py',
    'tests compared by counts only: the test runner did not name each test, so a deleted test reads as a passing one',
  ]);
});

test('winnerMergeNote speaks of merging automatically only when hydra says auto_merge is on', () => {
  // auto_merge on: whether the winner is good enough for it.
  assert.equal(winnerMergeNote({ autoMergeEligible: true, autoMergeEnabled: true }, false),
    'good enough to merge automatically (auto_merge is on)');
  assert.equal(winnerMergeNote({ autoMergeEligible: false, autoMergeEnabled: true }, false),
    'below auto_merge_minimum: not merged automatically');
  // Its flags' badge says why already.
  assert.equal(winnerMergeNote({ autoMergeEligible: false, autoMergeEnabled: true }, true), undefined);
  // auto_merge off, or a hydra that does not say: what is true either way.
  for (const autoMergeEnabled of [false, undefined]) {
    for (const autoMergeEligible of [true, false]) {
      assert.equal(winnerMergeNote({ autoMergeEligible, autoMergeEnabled }, false), 'eligible to merge');
    }
  }
});

test('autoMergeNotice says what auto_merge did with the winner, and nothing when it did nothing', () => {
  const finished = { raceId: 'r1', status: 'completed' as const, rankings: [], winner: 'fixer', autoMergeEligible: true, allFailed: false };
  assert.equal(autoMergeNotice(finished), undefined);
  assert.deepEqual(autoMergeNotice({ ...finished, autoMerge: { agentId: 'fixer', outcome: 'fastForward', targetBranch: 'main', commit: '7132d0db1234abcd' } }),
    { severity: 'info', message: 'Hydra: auto_merge merged fixer, the winner of race r1, into main (now at 7132d0db).' });
  // A hydra that does not name the branch.
  assert.equal(autoMergeNotice({ ...finished, autoMerge: { agentId: 'fixer', outcome: 'merged' } })?.message,
    'Hydra: auto_merge merged fixer, the winner of race r1, into your branch.');
  assert.equal(autoMergeNotice({ ...finished, autoMerge: { agentId: 'fixer', outcome: 'upToDate', targetBranch: 'main' } })?.message,
    'Hydra: main already contains fixer, the winner of race r1: auto_merge had nothing to merge.');
  assert.deepEqual(autoMergeNotice({ ...finished, autoMerge: { agentId: 'fixer', outcome: 'conflict', conflicts: ['lib.sh'] } }),
    { severity: 'warning', message: 'Hydra: auto_merge did not merge fixer, the winner of race r1: it conflicts in lib.sh; nothing was changed.' });
  assert.deepEqual(autoMergeNotice({ ...finished, autoMerge: { agentId: 'fixer', outcome: 'refused', error: 'merge refused: HEAD is detached' } }),
    { severity: 'warning', message: 'Hydra: auto_merge did not merge fixer, the winner of race r1: merge refused: HEAD is detached.' });
});

test('unconfinedNotice says the same words for every race, so that its notifications do not pile up', () => {
  const warning = 'bubblewrap cannot create a user namespace here\n(kernel.unprivileged_userns_clone = 0)';
  const first = unconfinedNotice({ sandboxWarning: warning });
  assert.equal(first, 'Hydra: races run their agents unconfined: bubblewrap cannot create a user namespace here (kernel.unprivileged_userns_clone = 0)');
  assert.equal(unconfinedNotice({ raceId: '20261125-230122-9bb5', sandboxWarning: warning } as { sandboxWarning: string }), first);
  assert.equal(unconfinedNotice({}), undefined);
  assert.equal(unconfinedNotice({ sandboxWarning: '' }), undefined);
});

test('briefProblem leaves out the search path hydra quotes, and nothing else', () => {
  assert.equal(briefProblem("'aider' not found on PATH (/root/.cargo/bin:/usr/local/bin:/usr/bin:/bin)"), "'aider' not found on PATH");
  assert.equal(briefProblem("'/r/vanisher.sh' does not exist or is not executable"), "'/r/vanisher.sh' does not exist or is not executable");
  assert.equal(briefProblem('the binary answered --version with exit 1 (no licence)'), 'the binary answered --version with exit 1 (no licence)');
});

test('a merged race says which agent went into which branch, and how', () => {
  const m = { agentId: 'fixer', outcome: 'fastForward' as const, targetBranch: 'main', commit: '4b1d9c0e7a2f3b5d', mergedAt: '' };
  assert.equal(mergedText(m), 'Merged fixer into main');
  assert.equal(mergedText(m, true), 'merged fixer into main');
  assert.equal(mergedText({ agentId: 'fixer', targetBranch: '' }), 'Merged fixer into your branch');
  assert.equal(mergedDetail(m), 'fast-forward, at 4b1d9c0e');
  assert.equal(mergedDetail({ ...m, outcome: 'merged', commit: undefined, automatic: true }), 'merge commit, by auto_merge');
});

test('alreadyMergedAgent reads MergeRefused alreadyMerged, and nothing else', () => {
  assert.equal(alreadyMergedAgent({ code: -32015, message: 'race was merged', data: { reason: 'alreadyMerged', agentId: 'fixer' } }), 'fixer');
  assert.equal(alreadyMergedAgent({ code: -32015, message: 'x', data: { reason: 'alreadyMerged' } }), '');
  assert.equal(alreadyMergedAgent({ code: -32015, message: 'x', data: { reason: 'ineligible', agentId: 'crasher' } }), undefined);
  assert.equal(alreadyMergedAgent({ code: -32014, message: 'dirty', data: { files: [] } }), undefined);
  assert.equal(alreadyMergedAgent(new Error('plain')), undefined);
  assert.equal(alreadyMergedAgent(undefined), undefined);
});

test('every agent state docs/protocol.md names has its own icon, setupFailed included', () => {
  const doc = fs.readFileSync(path.join(__dirname, '..', '..', '..', '..', '..', 'docs', 'protocol.md'), 'utf8');
  const start = doc.indexOf("An agent's `state` is");
  assert.ok(start >= 0);
  const sentence = doc.slice(start, doc.indexOf('.', start));
  const states = [...sentence.matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1]).filter((w) => w !== 'state');
  assert.ok(states.includes('setupFailed'), states.join(', '));
  const icons = states.map((s) => agentStateIcon(s as AgentStateName));
  for (const [i, icon] of icons.entries()) assert.ok(icon, `no icon for ${states[i]}`);
  assert.equal(new Set(icons).size, states.length, 'two states share an icon');
});

test('agent states read as plain words: a reviewer never needed is "not needed", not an identifier', () => {
  assert.equal(plainState('notNeeded'), 'not needed');
  assert.equal(plainState('timedOut'), 'timed out');
  assert.equal(plainState('setupFailed'), 'setup failed');
  assert.equal(plainState('completed'), 'completed');
  assert.equal(agentStateIcon('notNeeded'), 'dash');
});

test('an agent\'s control sequences are shown as text, as the CLI shows them', () => {
  assert.equal(visibleControls('a\x1b]52;c;aGk=\x07b'), 'a^[]52;c;aGk=^Gb');
  assert.equal(visibleControls('\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x1b\\'), '^[]8;;https://x.example^[\\link^[]8;;^[\\');
  assert.equal(visibleControls('cr\r nul\0 del\x7f csi\u009b1m'), 'cr^M nul^@ del^? csi\\u009b1m');
  assert.equal(visibleControls('tabs\tand\nlines stay, ünïcödé too'), 'tabs\tand\nlines stay, ünïcödé too');
  assert.equal(escapeHtml('<b>\x1b[31m'), '&lt;b&gt;^[[31m');
  assert.equal(describeServerError({ message: 'protected change to \x1b]0;owned\x07.py' }), 'protected change to ^[]0;owned^G.py');
  const tooltip = agentTooltip({ error: 'exit 1 \x1b[2J', stderrTail: 'boom\x1b]52;c;eA==\x07\n' }, undefined);
  assert.doesNotMatch(tooltip, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  assert.match(tooltip, /exit 1 \^\[\[2J/);
});

test('an agent\'s text for a terminal: controls visible, then every line ended with CR LF', () => {
  // A clear-screen, a title, a clipboard write, a bare carriage return, a C1 CSI: all shown, none left to drive the terminal.
  const hostile = 'go\x1b[2J\x1b]0;owned\x07\x1b]52;c;aGk=\x07 100%\rdone\u009b31m\n';
  const shown = terminalText(hostile);
  assert.equal(shown, 'go^[[2J^[]0;owned^G^[]52;c;aGk=^G 100%^Mdone\\u009b31m\r\n');
  assert.doesNotMatch(shown.replace(/\r\n/g, ''), /[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  // Only line ends become \r\n: a CRLF the agent wrote keeps its CR visible, and tabs stay.
  assert.equal(terminalText('a\r\nb\tc\n\n'), 'a^M\r\nb\tc\r\n\r\n');
  assert.equal(terminalText('no line end'), 'no line end');
});

test('notifications quoting an agent\'s warnings or paths show its control sequences as text', () => {
  const notice = agentFinishedNotice({ raceId: 'r', agentId: 'a', status: 'completed', warnings: ['odd \x1b]0;title\x07'] });
  assert.equal(notice, 'Hydra: a (race r) warned: odd ^[]0;title^G');
  const escaped = escapesMessage({ raceId: 'r', agentId: 'a', escapes: ['wrote /home/u/\x1b[2Jx'] });
  assert.equal(escaped, 'Hydra: a (race r) reached outside its worktree and cannot win: wrote /home/u/^[[2Jx');
});
