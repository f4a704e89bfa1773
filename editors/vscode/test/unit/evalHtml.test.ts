import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { type EvalPage, agentCells, passText, renderEvalReport } from '../../src/evalHtml';
import { formatElapsed } from '../../src/format';
import type { EvalProgress } from '../../src/evalModel';
import type { EvalReport, EvalReportResult } from '../../src/protocol';

// hydra/evalReport's answer recorded from a real evaluation of the demo
// project's eval set (test/e2e/record-eval-fixture.mjs): careful and
// alternating, two samples each (careful solves both, alternating the first).
const answer: EvalReportResult = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../test/unit/fixtures/evalReport.json'), 'utf8'));
const report = answer.report;
const base = { cspSource: 'vscode-webview://abc', nonce: 'n0nce', name: 'shopcart', path: answer.path };
const render = (page: Partial<EvalPage> = {}) => renderEvalReport({ ...base, report, ...page });
const running: EvalProgress = { evalId: 'shopcart-1', name: 'shopcart', report: answer.path, total: 4, done: 3, solved: 2, status: 'running' };

/** The cells of the row of `table` whose attributes match `attrs`, as text, with their data-k / data-col. */
function row(html: string, table: string, attrs: string): Array<{ key: string; text: string }> {
  const body = new RegExp(`<table class="${table}">[\\s\\S]*?</table>`).exec(html)?.[0] ?? '';
  const tr = new RegExp(`<tr ${attrs}[^>]*>([\\s\\S]*?)</tr>`).exec(body)?.[1];
  assert.ok(tr, `no row ${attrs} in table ${table}`);
  return [...tr.matchAll(/<td class="([^"]*)"(?: data-(?:k|col)="([^"]+)")?>([\s\S]*?)<\/td>/g)]
    .map((m) => ({ key: m[2] ?? m[1], text: m[3].replace(/<[^>]+>/g, '').trim() }));
}
const cell = (cells: Array<{ key: string; text: string }>, key: string) => cells.find((c) => c.key === key)?.text;

test('the agent table has a row per agent with pass@k for every k of the report', () => {
  const html = render();
  assert.match(html, /<th class="num" data-k="1">pass@1<\/th><th class="num" data-k="2">pass@2<\/th>/);
  const careful = row(html, 'agents', 'data-agent="careful"');
  assert.equal(cell(careful, '1'), '100.0%');
  assert.equal(cell(careful, '2'), '100.0%');
  const alternating = row(html, 'agents', 'data-agent="alternating"');
  assert.equal(cell(alternating, '1'), '50.0%');
  assert.equal(cell(alternating, '2'), '100.0%');
  const order = [...html.matchAll(/<table class="agents">[\s\S]*?<\/table>/g)][0][0].match(/data-agent="([^"]+)"/g);
  assert.deepEqual(order, ['data-agent="careful"', 'data-agent="alternating"']);
});

test('an agent row says its rates, score, cost, latency, pass@1 interval and solved/samples', () => {
  const alternating = row(render(), 'agents', 'data-agent="alternating"');
  assert.equal(cell(alternating, 'version'), '-', 'no version: a dash');
  assert.equal(cell(alternating, 'compile'), '100.0%');
  assert.equal(cell(alternating, 'tests'), '96.9%');
  assert.equal(cell(alternating, 'score'), '91.6');
  assert.equal(cell(alternating, 'cost'), 'n/a', 'no sample reported a cost');
  assert.equal(cell(alternating, 'latency'), formatElapsed(report.agents[1].meanLatencyMs));
  assert.equal(cell(alternating, 'wilson'), '[9.5%, 90.5%]');
  assert.equal(cell(alternating, 'solved'), '1/2');
  // A sample that reported a cost: the total, in dollars.
  const costed: EvalReport = { ...report, samples: report.samples.map((s) => ({ ...s, costUsd: 0.0125 })),
    agents: report.agents.map((a) => ({ ...a, totalCostUsd: 0.025 })) };
  assert.equal(agentCells(costed, costed.agents[1]).cost, '$0.0250');
  // No sample ran tests: n/a, as the CLI says, not 0%.
  const untested: EvalReport = { ...report, samples: report.samples.map((s) => ({ ...s, testsPassed: 0, testsFailed: 0 })) };
  assert.equal(agentCells(untested, untested.agents[0]).tests, 'n/a');
});

test('an undefined pass@k (null) reads n/a in both tables and in the chart', () => {
  // pass@3 of 2 samples is undefined: hydra says null.
  const withThree: EvalReport = {
    ...report,
    passK: [1, 2, 3],
    agents: report.agents.map((a) => ({ ...a, passAtK: { ...a.passAtK, 3: null } })),
    cases: report.cases.map((c) => ({ ...c, agents: c.agents.map((a) => ({ ...a, passAtK: { ...a.passAtK, 3: null } })) })),
  };
  const html = render({ report: withThree });
  assert.match(html, /<td class="num na" data-k="3">n\/a<\/td>/);
  assert.equal(cell(row(html, 'agents', 'data-agent="careful"'), '3'), 'n/a');
  assert.equal(cell(row(html, 'cases', 'data-case="coupon-case" data-agent="careful"'), '3'), 'n/a');
  assert.match(html, /<rect class="bar k2" [^>]*height="0" data-agent="careful" data-k="3" data-value="null">/);
  assert.equal(passText(null), 'n/a');
  assert.equal(passText(undefined), 'n/a');
  assert.equal(passText(0), '0.0%');
});

test('the case table has a row per case and agent: n, c, pass@k and mean score', () => {
  const html = render();
  const base = report.baseCommits['coupon-case'].slice(0, 8);
  const alternating = row(html, 'cases', 'data-case="coupon-case" data-agent="alternating"');
  assert.deepEqual(alternating.map((c) => c.text), [`coupon-case ${base}`, 'alternating', '2', '1', '50.0%', '100.0%', '91.6']);
  const careful = row(html, 'cases', 'data-case="coupon-case" data-agent="careful"');
  assert.deepEqual(careful.map((c) => c.text), [`coupon-case ${base}`, 'careful', '2', '2', '100.0%', '100.0%', '100.0']);
});

test('the chart has a group per agent and a bar per k, each labelled with its value and as tall as it', () => {
  const html = render();
  const svg = /<svg class="chart"[\s\S]*?<\/svg>/.exec(html)?.[0] ?? '';
  const groups = [...svg.matchAll(/<g class="group" data-agent="([^"]+)">([\s\S]*?)<\/g>/g)];
  assert.deepEqual(groups.map((g) => g[1]), ['careful', 'alternating']);
  const bars = (g: string) => [...g.matchAll(/<rect class="bar (k\d)" x="[\d.]+" y="([\d.]+)" width="\d+" height="([\d.]+)" data-agent="[^"]+" data-k="(\d+)" data-value="([^"]+)">/g)]
    .map((m) => ({ series: m[1], y: Number(m[2]), height: Number(m[3]), k: Number(m[4]), value: m[5] }));
  const labels = (g: string) => [...g.matchAll(/<text class="value"[^>]*data-k="(\d+)">([^<]+)<\/text>/g)].map((m) => [Number(m[1]), m[2]]);
  const alternating = bars(groups[1][2]);
  assert.deepEqual(alternating.map((b) => [b.k, b.value, b.series]), [[1, '0.5', 'k0'], [2, '1', 'k1']]);
  assert.equal(alternating[1].height, 2 * alternating[0].height, 'pass@2 = 1.00 is twice as tall as pass@1 = 0.50');
  assert.equal(alternating[0].y + alternating[0].height, alternating[1].y + alternating[1].height, 'on one baseline');
  assert.deepEqual(labels(groups[1][2]), [[1, '50.0%'], [2, '100.0%']]);
  assert.deepEqual(labels(groups[0][2]), [[1, '100.0%'], [2, '100.0%']]);
  assert.match(groups[0][2], /<text class="name"[^>]*><title>careful<\/title>careful<\/text>/);
  assert.match(html, /<span class="key"><span class="swatch k0"><\/span>pass@1<\/span> <span class="key"><span class="swatch k1"><\/span>pass@2<\/span>/);
});

test('names from the eval set and the agents are escaped everywhere', () => {
  const evil = '<img src=x onerror="alert(1)">';
  const hostile: EvalReport = {
    ...report,
    name: 'set & <b>',
    samples: report.samples.map((s) => ({ ...s, agent: evil, caseId: 'case"x', error: '</td><script>bad()</script>' })),
    cases: [{ caseId: 'case"x', agents: [{ ...report.cases[0].agents[0], agent: evil }] }],
    agents: [{ ...report.agents[0], agent: evil, version: '1.0 <beta>' }],
    baseCommits: { 'case"x': '<sha>' },
  };
  const html = renderEvalReport({ ...base, name: 'set & <b>', path: '/r/<x>.json', report: hostile });
  assert.doesNotMatch(html, /<img|<b>|<beta>|<sha>|<x>|<script>bad/);
  assert.match(html, /<h1>Eval: set &amp; &lt;b&gt;<\/h1>/);
  assert.match(html, /<title>Hydra Eval: set &amp; &lt;b&gt;<\/title>/);
  assert.match(html, /data-agent="&lt;img src=x onerror=&quot;alert\(1\)&quot;&gt;"/);
  assert.match(html, /data-case="case&quot;x"/);
  assert.match(html, /<td class="version">1\.0 &lt;beta&gt;<\/td>/);
  assert.match(html, /<code>\/r\/&lt;x&gt;\.json<\/code>/);
  assert.match(html, /&lt;\/td&gt;&lt;script&gt;bad\(\)&lt;\/script&gt;/);
});

test('the content security policy allows only the nonce and the webview source', () => {
  const html = render({ progress: running });
  const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1] ?? '';
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'nonce-n0nce'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
  for (const m of html.matchAll(/<(script|style)([^>]*)>/g)) assert.match(m[2], /nonce="n0nce"/);
  assert.doesNotMatch(html, /\sstyle="/, 'no inline style attributes: the policy would block them');
  assert.doesNotMatch(html, /(src|href)="(https?:)?\/\//, 'nothing loaded from elsewhere');
});

test('while it runs: "D/T samples · S solved" in a span the samples update, and a Cancel button', () => {
  const html = render({ progress: running });
  assert.match(html, /<p class="status" data-status="running" data-done="3" data-total="4" data-solved="2"><span class="state running">running<\/span> &middot; <span class="counts">3\/4 samples · 2 solved<\/span> <button class="cancel secondary">Cancel<\/button><\/p>/);
  // Before the first sample the tables have nothing to show.
  const empty = renderEvalReport({ ...base, progress: { ...running, done: 0, solved: 0 } });
  assert.match(empty, /No sample has finished yet\./);
  assert.doesNotMatch(empty, /<table|<svg/);
  assert.match(empty, /0\/4 samples · 0 solved/);
});

test('once it ended: its status and the report\'s path, and no Cancel', () => {
  const completed = render({ progress: { ...running, done: 4, solved: 3, status: 'completed' } });
  assert.match(completed, /<span class="state completed">completed<\/span> &middot; <span class="counts">4\/4 samples · 3 solved<\/span><\/p>/);
  assert.match(completed, new RegExp(`<p class="path">Report: <a href="#" class="open-report"[^>]*><code>${answer.path}</code></a></p>`));
  assert.doesNotMatch(completed, /button class="cancel/);
  assert.doesNotMatch(completed, /--resume/);
  const cancelled = render({ progress: { ...running, status: 'cancelled' } });
  assert.match(cancelled, /<span class="state cancelled">cancelled<\/span> &middot; <span class="counts">3\/4 samples · 2 solved<\/span><\/p>/);
  assert.match(cancelled, /<code>hydra eval run SET --resume REPORT<\/code> runs the rest/);
  assert.match(render({ progress: { ...running, status: 'interrupted' } }), /hydra stopped before the evaluation ended/);
});

test('a report opened from a file says what it holds and whether it finished', () => {
  const html = render();
  assert.match(html, /<span class="state finished">finished<\/span> &middot; <span class="counts">4 samples · 3 solved<\/span>/);
  assert.match(html, new RegExp(`hydra ${report.hydraVersion} &middot; eval set <code title="${report.evalSetHash}">${
    report.evalSetHash.slice(0, 12)}</code> &middot; started ${report.startedAt} &middot; finished ${report.finishedAt}</p>`));
  const { finishedAt: _, ...unfinished } = report;
  assert.match(render({ report: unfinished }), /<span class="state unfinished">unfinished<\/span>/);
  assert.match(render({ report: { ...report, samples: [], cases: [], agents: [] } }), /The report holds no sample\./);
});

test('every sample is listed, folded, with its verdict and error', () => {
  const html = render();
  assert.match(html, /<details class="samples">\s*<summary>Samples \(4\)<\/summary>/);
  assert.match(html, /<tr data-case="coupon-case" data-agent="alternating" data-index="1" data-solved="false">[\s\S]*?&#10007; not solved/);
  assert.equal([...html.matchAll(/data-solved="true"/g)].length, 3);
  const failed: EvalReport = { ...report, samples: report.samples.map((s) => (s.solved ? s : { ...s, error: 'verify_command failed (exit 1):\n1 failed' })) };
  assert.match(render({ report: failed }), /data-index="1" data-solved="false">[\s\S]*?<td class="error">verify_command failed \(exit 1\): 1 failed<\/td><\/tr>/);
});
