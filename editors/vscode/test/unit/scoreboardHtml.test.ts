import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { renderMergeButton, renderScoreboard } from '../../src/scoreboardHtml';
import type { ScoresResult } from '../../src/protocol';

// A hydra/scores answer recorded from a real race (two scripted agents).
const scores: ScoresResult = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../test/unit/fixtures/scores.json'), 'utf8'));
const page = { cspSource: 'vscode-webview://abc', nonce: 'n0nce', task: 'Fix add() <now>' };

test('cards follow the ranking hydra returned', () => {
  const html = renderScoreboard(scores, page);
  const agents = [...html.matchAll(/<section class="card[^"]*" data-agent="([^"]+)" data-rank="(\d+)"/g)].map((m) => [m[1], Number(m[2])]);
  assert.deepEqual(agents, scores.rankings.map((r) => [r.agentId, r.rank]));
  assert.match(html, new RegExp(`<section class="card winner" data-agent="${scores.winner}"`));
});

test('each dimension gets a bar coloured by its band, n/a when excluded', () => {
  const html = renderScoreboard(scores, page);
  const winner = scores.rankings[0];
  assert.ok(winner.breakdown.build === 100);
  assert.match(html, /data-dimension="Build">\s*<span class="label">Build<\/span>\s*<span class="bar"><span class="fill good" data-value="100">/);
  const loser = scores.rankings[scores.rankings.length - 1];
  assert.ok(loser.total < 50, 'the fixture has a failing agent');
  assert.match(html, new RegExp(`<span class="total poor" data-total="${loser.total}">`));
  assert.match(html, /data-dimension="Lint">[\s\S]*?<span class="value">n\/a<\/span>/);
});

test('a score is never shown higher than it is: 2 of 704 tests failing read 99, a total of 99.96 reads 99.9', () => {
  const close: ScoresResult = JSON.parse(JSON.stringify(scores));
  close.rankings[0].breakdown.tests = (100 * 702) / 704;
  close.rankings[0].total = 99.96;
  const html = renderScoreboard(close, page);
  assert.match(html, /data-dimension="Tests">[\s\S]*?<span class="value">99<\/span>/);
  assert.match(html, /data-total="99.96">99.9<\/span>/);
  assert.doesNotMatch(html, />100.0</);
});

test('raw check output is escaped inside expandable sections', () => {
  const html = renderScoreboard(scores, page);
  assert.match(html, /<details class="check" data-check="tests">/);
  assert.match(html, /passed, \d+ failed/);
  assert.match(html, /Fix add\(\) &lt;now&gt;/);
  assert.doesNotMatch(html, /<now>/);
});

test('control sequences an agent printed show as text, never as the characters themselves', () => {
  const hostile: ScoresResult = JSON.parse(JSON.stringify(scores));
  const check = hostile.rankings[0].checks.tests;
  assert.ok(check, 'the fixture has a test check');
  check.output = 'ok\x1b]52;c;aGVsbG8=\x07 done\x1b[2J\u009b31m';
  const html = renderScoreboard(hostile, page);
  assert.match(html, /ok\^\[\]52;c;aGVsbG8=\^G done\^\[\[2J\\u009b31m/);
  assert.doesNotMatch(html, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
});

test('the content security policy allows only the nonce and the webview source', () => {
  const html = renderScoreboard(scores, page);
  const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1] ?? '';
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'nonce-n0nce'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  for (const m of html.matchAll(/<(script|style)([^>]*)>/g)) assert.match(m[2], /nonce="n0nce"/);
  assert.doesNotMatch(html, /\sstyle="/, 'no inline style attributes: the policy would block them');
});

test('an unranked race says so instead of showing cards', () => {
  const html = renderScoreboard({ ...scores, rankings: [], winner: null }, page);
  assert.match(html, /No agent was ranked/);
  assert.doesNotMatch(html, /<section class="card/);
});

test('a dimension whose check was skipped shows --, as the CLI does, not 0', () => {
  const html = renderScoreboard(scores, page);
  const breaker = scores.rankings.find((r) => r.agentId === 'breaker');
  assert.ok(breaker?.checks.tests?.skipped, 'the fixture skipped the tests of the agent whose build failed');
  const card = html.slice(html.indexOf('data-agent="breaker"'));
  assert.match(card, /data-dimension="Tests">\s*<span class="label">Tests<\/span>\s*<span class="bar"><span class="fill none" data-value="0"><\/span><\/span>\s*<span class="value">--<\/span>/);
  // The build itself ran and failed: a red 0.
  assert.match(card, /data-dimension="Build">[\s\S]*?<span class="fill poor" data-value="0">[\s\S]*?<span class="value">0<\/span>/);
});

test('the summary speaks of merging automatically only when hydra says auto_merge is on', () => {
  assert.ok(scores.autoMergeEligible);
  const summary = (s: ScoresResult) => /<p class="summary">([\s\S]*?)<\/p>/.exec(renderScoreboard(s, page))?.[1] ?? '';
  // The recorded answer predates autoMergeEnabled: neutral words, true either way.
  assert.equal(scores.autoMergeEnabled, undefined);
  assert.equal(summary(scores), 'Winner: <strong>fixer</strong> &middot; <span class="merge-note">eligible to merge</span>');
  assert.doesNotMatch(summary({ ...scores, autoMergeEnabled: false }), /automatic|auto_merge/);
  assert.match(summary({ ...scores, autoMergeEnabled: true }), /good enough to merge automatically \(auto_merge is on\)/);
  assert.match(summary({ ...scores, autoMergeEnabled: true, autoMergeEligible: false }), /below auto_merge_minimum: not merged automatically/);
});

test('the winner\'s card, and only it, wears a winner badge', () => {
  const html = renderScoreboard(scores, page);
  assert.equal([...html.matchAll(/class="badge winner-badge"/g)].length, 1);
  const winnerCard = html.slice(html.indexOf('data-agent="fixer"'), html.indexOf('data-agent="breaker"'));
  assert.match(winnerCard, /<span class="agent">fixer<\/span>\s*<span class="badge winner-badge">&#9733; winner<\/span>/);
  assert.doesNotMatch(renderScoreboard({ ...scores, winner: null, allFailed: true }, page), /class="badge winner-badge"/);
});

test('an agent that cannot win is marked, shows its error and has no Merge button', () => {
  const [winner, loser] = scores.rankings;
  const failed = { ...loser, status: 'failed', eligible: false, ineligible: 'failed' };
  const html = renderScoreboard({ ...scores, rankings: [winner, failed] },
    { ...page, agents: { [loser.agentId]: { error: 'exited with code 3: <quota> exceeded' } } });
  const card = html.slice(html.indexOf(`data-agent="${loser.agentId}"`));
  assert.match(html, new RegExp(`<section class="card ineligible" data-agent="${loser.agentId}"`));
  assert.match(card, /<p class="cannot-win poor-text">failed: cannot win<\/p>/);
  assert.match(card, /<p class="error">exited with code 3: &lt;quota&gt; exceeded<\/p>/);
  assert.doesNotMatch(card, /button class="merge/);
  assert.match(card, /button class="diff secondary"/);
  assert.match(card, /button class="all-changes secondary" data-agent="[^"]+" title="Every file [^"]+ changed, in one editor">All Changes<\/button>/);
  // The winner keeps its button, and no mark.
  const winnerCard = html.slice(html.indexOf(`data-agent="${winner.agentId}"`), html.indexOf(`data-agent="${loser.agentId}"`));
  assert.match(winnerCard, /button class="merge"/);
  assert.doesNotMatch(winnerCard, /cannot win/);
});

test('only the winner\'s Merge button is the primary one; any other agent\'s is secondary, and says it asks first', () => {
  const [winner, second] = scores.rankings;
  assert.equal(second.eligible !== false, true);
  const html = renderScoreboard(scores, page);
  const winnerCard = html.slice(html.indexOf(`data-agent="${winner.agentId}"`), html.indexOf(`data-agent="${second.agentId}"`));
  const secondCard = html.slice(html.indexOf(`<section class="card" data-agent="${second.agentId}"`));
  assert.match(winnerCard, /<button class="merge" data-agent="[^"]+" title="Merge the winner, [^"]+">Merge<\/button>/);
  assert.match(secondCard, new RegExp(`<button class="merge secondary" data-agent="${second.agentId}" title="${second.agentId} is not the winner: merging it asks first">Merge</button>`));
  assert.equal([...html.matchAll(/<button class="merge"/g)].length, 1, 'one primary Merge button: the winner\'s');
  // A race without a winner has no primary Merge button at all.
  assert.doesNotMatch(renderScoreboard({ ...scores, winner: null }, page), /<button class="merge"/);
  assert.match(renderMergeButton('<x>', false), /data-agent="&lt;x&gt;" title="&lt;x&gt; is not the winner/);
});

test('a race in which every agent failed says so, and names no winner', () => {
  const html = renderScoreboard({ ...scores, winner: null, allFailed: true, autoMergeEligible: false }, page);
  assert.match(html, /<p class="summary all-failed"><strong class="poor-text">All agents failed: no winner<\/strong> \(the best, fixer, has \d+\.\d \/ 100, below the fail threshold\)\.<\/p>/);
  assert.doesNotMatch(html, /Winner:/);
  assert.doesNotMatch(html, /class="card winner"/);
  const none = renderScoreboard({
    ...scores, winner: null, allFailed: true, autoMergeEligible: false,
    rankings: scores.rankings.map((r) => ({ ...r, eligible: false, ineligible: 'changed nothing' })),
  }, page);
  assert.match(none, /All agents failed: no winner<\/strong> \(none finished with a change that could be merged\)/);
  assert.doesNotMatch(none, /button class="merge/);
});

// An agent's output is untrusted: its test names, warnings and stderr are text, never markup.
const HOSTILE = '<img src=x onerror=alert(1)>';

function cardOf(html: string, agentId: string): string {
  const start = html.indexOf(`data-agent="${agentId}"`);
  return html.slice(start, html.indexOf('</section>', start));
}

test('a card lists the tests fixed, broken and removed against the base, capped, and escapes their names', () => {
  const [winner, loser] = scores.rankings;
  const many = Array.from({ length: 14 }, (_, i) => `tests/test_cart.py::test_${i}`);
  const html = renderScoreboard({
    ...scores,
    rankings: [
      { ...winner, testChanges: { fixed: ['tests/test_add.py::test_sum', HOSTILE], broken: [], removed: [] } },
      { ...loser, testChanges: { fixed: [], broken: many, removed: ['tests/test_login.py::test_flaky'] } },
    ],
  }, page);
  const fixer = cardOf(html, winner.agentId);
  assert.match(fixer, /<p class="test-change" data-kind="fixed"><span class="good-text">2 fixed<\/span> \(fail → pass\): <code>tests\/test_add.py::test_sum<\/code>, <code>&lt;img src=x onerror=alert\(1\)&gt;<\/code><\/p>/);
  assert.doesNotMatch(fixer, /data-kind="broken"|data-kind="removed"/, 'a kind without tests gets no row');
  assert.doesNotMatch(html, /<img/);
  const breaker = cardOf(html, loser.agentId);
  assert.match(breaker, /<span class="poor-text">14 broken<\/span> \(pass → fail\): <code>tests\/test_cart.py::test_0<\/code>/);
  assert.match(breaker, /<code>tests\/test_cart.py::test_9<\/code> and 4 more<\/p>/);
  assert.doesNotMatch(breaker, /test_10/);
  assert.match(breaker, /<span class="warn-text">1 removed<\/span> \(ran at the base, not now\): <code>tests\/test_login.py::test_flaky<\/code>/);
});

test('tests compared with the base and unchanged say so; tests not compared say nothing', () => {
  const [winner] = scores.rankings;
  const same = renderScoreboard({ ...scores, rankings: [{ ...winner, testChanges: { fixed: [], broken: [], removed: [] } }] }, page);
  assert.match(same, /data-kind="none">Tests as at the base: none fixed, broken, removed or skipped</);
  assert.doesNotMatch(renderScoreboard(scores, page), /class="test-changes"/);
});

test('a card names tests skipped or xfailed now as scored as failed, and says when tests were compared by counts only', () => {
  const [winner, loser] = scores.rankings;
  const html = renderScoreboard({
    ...scores,
    rankings: [
      { ...winner, testChanges: { fixed: [], broken: [], removed: [], skipped: ['tests/test_calc.py::test_sub', HOSTILE] } },
      { ...loser, testsByCountsOnly: true },
    ],
  }, page);
  const xfailer = cardOf(html, winner.agentId);
  assert.match(xfailer, /<p class="test-change" data-kind="skipped"><span class="poor-text">2 skipped or xfailed now<\/span> \(ran at the base; scored as failed\): <code>tests\/test_calc.py::test_sub<\/code>, <code>&lt;img src=x onerror=alert\(1\)&gt;<\/code><\/p>/);
  assert.doesNotMatch(xfailer, /data-kind="counts-only"/);
  assert.doesNotMatch(html, /<img/);
  assert.match(cardOf(html, loser.agentId),
    /<p class="test-change" data-kind="counts-only"><span class="warn-text">tests compared by counts only<\/span>: the test runner did not name each test, so a deleted test reads as a passing one<\/p>/);
});

test("a flagged agent keeps its Merge button but is marked not for auto-merge, with why", () => {
  const [winner, loser] = scores.rankings;
  const flagged = {
    ...winner,
    flags: ['2 tool calls denied', `changed protected files: tests/conftest.py ${HOSTILE}`],
    protectedChanges: ['tests/conftest.py', HOSTILE],
    protectedMode: 'restore' as const,
  };
  const html = renderScoreboard({ ...scores, autoMergeEligible: false, rankings: [flagged, loser] }, page);
  assert.match(html, new RegExp(`<section class="card winner flagged" data-agent="${winner.agentId}"`));
  const card = cardOf(html, winner.agentId);
  assert.match(card, /<p class="flags"><span class="badge">&#9888; not for auto-merge<\/span> <span class="flag">2 tool calls denied<\/span>; <span class="flag">changed protected files: tests\/conftest.py &lt;img src=x onerror=alert\(1\)&gt;<\/span><\/p>/);
  assert.match(card, /<p class="protected" data-mode="restore">Changed protected files: <code>tests\/conftest.py<\/code>, <code>&lt;img[^<]*&gt;<\/code> &middot; its checks ran with the base versions put back<\/p>/);
  assert.match(card, /button class="merge"/, 'a flagged agent may still be merged by hand');
  // The summary names the winner, and why hydra would not merge it by itself.
  assert.match(html, /Winner: <strong>fixer<\/strong> &middot; <span class="merge-note">eligible to merge<\/span> &middot; <span class="warn-text">&#9888; not for auto-merge: 2 tool calls denied; changed protected files/);
  assert.doesNotMatch(html, /<img/);
  const unflagged = cardOf(html, loser.agentId);
  assert.doesNotMatch(unflagged, /not for auto-merge|class="protected"/);
  const kept = renderScoreboard({ ...scores, rankings: [{ ...flagged, protectedMode: 'flag' as const, flags: ['changed protected files: tests/conftest.py'] }, loser] }, page);
  assert.match(cardOf(kept, winner.agentId), /data-mode="flag">Changed protected files: [\s\S]*? &middot; its checks ran with its versions</);
});

test("an agent's warnings are listed and its stderr tail is folded away, both escaped", () => {
  const [winner, loser] = scores.rankings;
  const html = renderScoreboard(scores, {
    ...page,
    agents: {
      [loser.agentId]: {
        warnings: ['permission denied: Write /etc/passwd', HOSTILE],
        stderrTail: `warming up\nmodel said: quota exceeded </pre><script>alert(1)</script>\n`,
        deniedToolCalls: 1,
      },
    },
  });
  const card = cardOf(html, loser.agentId);
  assert.match(card, /<ul class="warnings">\s*<li>&#9888; permission denied: Write \/etc\/passwd<\/li>\s*<li>&#9888; &lt;img src=x onerror=alert\(1\)&gt;<\/li>\s*<\/ul>/);
  assert.match(card, /<details class="stderr">\s*<summary>stderr \(last 2 lines\)<\/summary>\s*<pre>warming up\nmodel said: quota exceeded &lt;\/pre&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/pre>/);
  assert.doesNotMatch(card, /<details class="stderr" open/, 'the tail starts folded');
  // Unscored flags (an older hydra): the denials alone mark it.
  assert.match(card, /<span class="badge">&#9888; not for auto-merge<\/span> <span class="flag">1 tool call denied<\/span>/);
  assert.equal([...html.matchAll(/<script/g)].length, 1, 'only the page\'s own script');
  const quiet = cardOf(html, winner.agentId);
  assert.doesNotMatch(quiet, /class="warnings"|class="stderr"|class="flags"/);
  // Many warnings: the output channel has them all.
  const noisy = renderScoreboard(scores, { ...page, agents: { [loser.agentId]: { warnings: Array.from({ length: 13 }, (_, i) => `w${i}`) } } });
  assert.match(cardOf(noisy, loser.agentId), /<li>&#9888; w9<\/li>\s*<li>and 3 more<\/li>\s*<\/ul>/);
});

test('the test counts come from the named test cases when the runner gave no summary', () => {
  const [winner] = scores.rankings;
  const tests = { ...winner.checks.tests!, tests: null, testCases: { a: 'passed' as const, b: 'passed' as const, c: 'failed' as const, d: 'skipped' as const } };
  const html = renderScoreboard({ ...scores, rankings: [{ ...winner, checks: { ...winner.checks, tests } }] }, page);
  assert.match(html, /data-check="tests">\s*<summary>tests: <code>[^<]*<\/code> \([^)]*, 2 passed, 1 failed\)/);
});

test('a merged race says what was merged into which branch and offers no Merge on any card', () => {
  const unmerged = renderScoreboard(scores, page);
  assert.equal([...unmerged.matchAll(/<button class="merge[" ]/g)].length, scores.rankings.filter((r) => r.eligible !== false).length);
  const merged = { agentId: scores.winner!, outcome: 'fastForward' as const, targetBranch: 'main', commit: '4b1d9c0e7a2f', mergedAt: '' };
  const html = renderScoreboard(scores, { ...page, merged });
  assert.doesNotMatch(html, /<button class="merge/);
  assert.doesNotMatch(html, /eligible to merge|merge automatically/);
  assert.match(html, new RegExp(`<p class="summary merged"><span class="merged-note">Merged ${scores.winner} into main</span> <span class="merged-detail">\\(fast-forward, at 4b1d9c0e\\)</span></p>`));
  assert.match(html, new RegExp(`<section class="card winner merged" data-agent="${scores.winner}"[\\s\\S]*?<span class="badge merged-badge">merged into main</span>`));
  assert.equal([...html.matchAll(/merged-badge">/g)].length, 1, 'only the agent merged wears the badge');
  // Show Diff stays.
  assert.equal([...html.matchAll(/<button class="diff secondary"/g)].length, scores.rankings.length);
});

test('a race merged with an agent other than the winner still names the winner', () => {
  const loser = scores.rankings[scores.rankings.length - 1].agentId;
  const html = renderScoreboard(scores, { ...page, merged: { agentId: loser, outcome: 'merged', targetBranch: 'dev', mergedAt: '', automatic: false } });
  assert.match(html, new RegExp(`Merged ${loser} into dev</span> <span class="merged-detail">\\(merge commit\\)</span> &middot; winner: ${scores.winner}</p>`));
});
