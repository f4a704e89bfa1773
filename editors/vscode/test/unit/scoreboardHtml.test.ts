import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { renderScoreboard } from '../../src/scoreboardHtml';
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

test('raw check output is escaped inside expandable sections', () => {
  const html = renderScoreboard(scores, page);
  assert.match(html, /<details class="check" data-check="tests">/);
  assert.match(html, /passed, \d+ failed/);
  assert.match(html, /Fix add\(\) &lt;now&gt;/);
  assert.doesNotMatch(html, /<now>/);
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

test('the summary says the total reaches the auto-merge minimum, never that it merges by itself', () => {
  assert.ok(scores.autoMergeEligible);
  const html = renderScoreboard(scores, page);
  assert.match(html, /its total reaches auto_merge_minimum/);
  assert.doesNotMatch(html, /merge automatically|eligible for auto-merge/);
  assert.doesNotMatch(renderScoreboard({ ...scores, autoMergeEligible: false }, page), /auto_merge_minimum/);
});

test('an agent that cannot win is marked, shows its error and has no Merge button', () => {
  const [winner, loser] = scores.rankings;
  const failed = { ...loser, status: 'failed', eligible: false, ineligible: 'failed' };
  const html = renderScoreboard({ ...scores, rankings: [winner, failed] },
    { ...page, errors: { [loser.agentId]: 'exited with code 3: <quota> exceeded' } });
  const card = html.slice(html.indexOf(`data-agent="${loser.agentId}"`));
  assert.match(html, new RegExp(`<section class="card ineligible" data-agent="${loser.agentId}"`));
  assert.match(card, /<p class="cannot-win poor-text">failed: cannot win<\/p>/);
  assert.match(card, /<p class="error">exited with code 3: &lt;quota&gt; exceeded<\/p>/);
  assert.doesNotMatch(card, /button class="merge"/);
  assert.match(card, /button class="diff secondary"/);
  // The winner keeps its button, and no mark.
  const winnerCard = html.slice(html.indexOf(`data-agent="${winner.agentId}"`), html.indexOf(`data-agent="${loser.agentId}"`));
  assert.match(winnerCard, /button class="merge"/);
  assert.doesNotMatch(winnerCard, /cannot win/);
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
  assert.doesNotMatch(none, /button class="merge"/);
});
