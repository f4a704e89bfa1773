// The eval report's HTML: how the evaluation stands (running, completed or
// cancelled, samples done and solved) or, for a report opened from a file,
// what it holds; a bar chart of pass@k per agent (inline SVG: one group per
// agent, one bar per k, each labelled with its value); a table per agent
// (pass@k, compile and test pass rates, mean score, cost, latency, the
// pass@1 Wilson interval, solved/samples), a table per case and agent, and,
// folded, every sample. A pure function of hydra/evalReport's answer and the
// progress hydra/evalSample gave, so the unit tests read what it renders.
// Agent names, case ids, versions and errors come from the eval set and the
// agents: all of it is escaped.
import type { EvalAgent, EvalReport, EvalSample, PassAtK } from './protocol';
import { escapeHtml, formatElapsed, oneLine } from './format';
import { type EvalProgress, progressText } from './evalModel';
import { webviewCsp } from './scoreboardHtml';

export interface EvalPage {
  /** The webview's csp source (webview.cspSource). */
  cspSource: string;
  /** A fresh random value: the only scripts and styles that run carry it. */
  nonce: string;
  /** The eval set's name (the report's, once there is one). */
  name: string;
  /** What hydra/evalReport answered last; undefined before its first answer. */
  report?: EvalReport;
  /** The report's path. */
  path?: string;
  /** An evaluation this window runs or ran: how it stands. Absent for a report opened from a file. */
  progress?: EvalProgress;
}

/** pass@k as the terminal and Neovim say it ("50.0%"); "n/a" where it is undefined (k greater than the samples). */
export function passText(value: number | null | undefined): string {
  return value === null || value === undefined || Number.isNaN(value) ? 'n/a' : percentText(value);
}

/** A share as a percentage: "87.5%". */
export function percentText(share: number): string {
  return `${(100 * share).toFixed(1)}%`;
}

/** pass@k of one k from an object keyed by k; null when it is not there. */
export function passAt(passAtK: PassAtK, k: number): number | null {
  const value = passAtK[String(k)];
  return typeof value === 'number' ? value : null;
}

/** What the agent row says of an agent, cell by cell (after its pass@k): the CLI's "n/a" where nothing was measured. */
export function agentCells(report: EvalReport, a: EvalAgent): { compile: string; tests: string; score: string; cost: string; latency: string; wilson: string; solved: string } {
  const mine = report.samples.filter((s) => s.agent === a.agent);
  const ranTests = mine.some((s) => s.testsPassed + s.testsFailed > 0);
  const costed = mine.some((s) => typeof s.costUsd === 'number');
  return {
    compile: percentText(a.compileRate),
    tests: ranTests ? percentText(a.testPassRate) : 'n/a',
    score: a.meanScore.toFixed(1),
    cost: costed ? `$${a.totalCostUsd.toFixed(4)}` : 'n/a',
    latency: formatElapsed(a.meanLatencyMs),
    wilson: `[${percentText(a.passAt1Wilson.low)}, ${percentText(a.passAt1Wilson.high)}]`,
    solved: `${a.solved}/${a.samples}`,
  };
}

export function renderEvalReport(page: EvalPage): string {
  const csp = webviewCsp(page.cspSource, page.nonce);
  const report = page.report;
  const name = report?.name || page.name;
  const hasAgents = (report?.agents.length ?? 0) > 0;
  let body: string;
  if (report && hasAgents) {
    body = [renderChart(report), renderAgents(report), renderCases(report), renderSamples(report.samples)].join('\n');
  } else {
    body = `<p class="empty">${page.progress?.status === 'running' || !report ? 'No sample has finished yet.' : 'The report holds no sample.'}</p>`;
  }
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>Hydra Eval: ${escapeHtml(name)}</title>
<style nonce="${page.nonce}">${STYLE}</style>
</head>
<body>
<h1>Eval: ${escapeHtml(name)}</h1>
${renderStatus(page)}
${renderProvenance(report)}${page.path ? `<p class="path">Report: <a href="#" class="open-report" title="Open the JSON report"><code>${escapeHtml(page.path)}</code></a></p>\n` : ''}${body}
<script nonce="${page.nonce}">${SCRIPT}</script>
</body>
</html>`;
}

/**
 * How the evaluation stands: "running · 3/4 samples · 2 solved" (the counts
 * in their own span, which hydra/evalSample updates without drawing the page
 * again), with a Cancel button while it runs; for a report opened from a
 * file, what it holds and whether it finished.
 */
function renderStatus(page: EvalPage): string {
  const p = page.progress;
  if (p) {
    const cancel = p.status === 'running' ? ' <button class="cancel secondary">Cancel</button>' : '';
    const why = p.status === 'interrupted' ? 'hydra stopped before the evaluation ended. ' : '';
    const note = p.status === 'cancelled' || p.status === 'interrupted'
      ? `\n<p class="note">${why}The report keeps the samples that finished: <code>hydra eval run SET --resume REPORT</code> runs the rest.</p>` : '';
    return `<p class="status" data-status="${p.status}" data-done="${p.done}" data-total="${p.total}" data-solved="${p.solved}"><span class="state ${
      p.status}">${p.status}</span> &middot; <span class="counts">${escapeHtml(progressText(p))}</span>${cancel}</p>${note}`;
  }
  const report = page.report;
  if (!report) return '';
  const solved = report.samples.filter((s) => s.solved).length;
  const state = report.finishedAt ? 'finished' : 'unfinished';
  return `<p class="status" data-status="${state}" data-done="${report.samples.length}" data-solved="${solved}"><span class="state ${state}">${state}</span> &middot; <span class="counts">${
    report.samples.length} sample${report.samples.length === 1 ? '' : 's'} · ${solved} solved</span></p>`;
}

/** "hydra 0.9.0 · eval set 2d6450f3 · started ... · finished ...". */
function renderProvenance(report: EvalReport | undefined): string {
  if (!report) return '';
  const parts: string[] = [];
  if (report.hydraVersion) parts.push(`hydra ${escapeHtml(report.hydraVersion)}`);
  if (report.evalSetHash) parts.push(`eval set <code title="${escapeHtml(report.evalSetHash)}">${escapeHtml(report.evalSetHash.slice(0, 12))}</code>`);
  if (report.startedAt) parts.push(`started ${escapeHtml(report.startedAt)}`);
  if (report.finishedAt) parts.push(`finished ${escapeHtml(report.finishedAt)}`);
  return parts.length > 0 ? `<p class="meta">${parts.join(' &middot; ')}</p>\n` : '';
}

const passHeaders = (report: EvalReport) => report.passK.map((k) => `<th class="num" data-k="${k}">pass@${k}</th>`).join('');
const passCells = (report: EvalReport, passAtK: PassAtK) => report.passK.map((k) => {
  const value = passAt(passAtK, k);
  return `<td class="num${value === null ? ' na' : ''}" data-k="${k}">${passText(value)}</td>`;
}).join('');

function renderAgents(report: EvalReport): string {
  const rows = report.agents.map((a) => {
    const c = agentCells(report, a);
    return `    <tr data-agent="${escapeHtml(a.agent)}"><td class="agent">${escapeHtml(a.agent)}</td><td class="version">${escapeHtml(a.version || '-')}</td>${
      passCells(report, a.passAtK)}<td class="num" data-col="compile">${c.compile}</td><td class="num${c.tests === 'n/a' ? ' na' : ''}" data-col="tests">${
      c.tests}</td><td class="num" data-col="score">${c.score}</td><td class="num${c.cost === 'n/a' ? ' na' : ''}" data-col="cost">${
      c.cost}</td><td class="num" data-col="latency">${c.latency}</td><td class="num" data-col="wilson">${c.wilson}</td><td class="num" data-col="solved">${
      c.solved}</td></tr>`;
  });
  return `<h2>Agents</h2>
<table class="agents">
  <thead><tr><th>agent</th><th>version</th>${passHeaders(report)}<th class="num" title="share of samples that built">compile</th><th class="num" title="passed / (passed + failed), over the samples that ran tests">tests</th><th class="num" title="hydra's mean score, 0-100">score</th><th class="num">cost</th><th class="num" title="mean time of an agent run">latency</th><th class="num" title="Wilson 95% interval of the share of samples solved">pass@1 95% CI</th><th class="num">solved</th></tr></thead>
  <tbody>
${rows.join('\n')}
  </tbody>
</table>`;
}

function renderCases(report: EvalReport): string {
  const rows = report.cases.flatMap((c) => c.agents.map((a) => {
    const base = report.baseCommits[c.caseId];
    return `    <tr data-case="${escapeHtml(c.caseId)}" data-agent="${escapeHtml(a.agent)}"><td class="case">${escapeHtml(c.caseId)}${
      base ? ` <span class="base" title="base ${escapeHtml(base)}">${escapeHtml(base.slice(0, 8))}</span>` : ''}</td><td class="agent">${
      escapeHtml(a.agent)}</td><td class="num" data-col="n">${a.n}</td><td class="num" data-col="c">${a.c}</td>${passCells(report, a.passAtK)}<td class="num" data-col="score">${
      a.meanScore.toFixed(1)}</td></tr>`;
  }));
  return `<h2>Cases</h2>
<table class="cases">
  <thead><tr><th>case</th><th>agent</th><th class="num" title="samples">n</th><th class="num" title="solved samples">c</th>${passHeaders(report)}<th class="num">score</th></tr></thead>
  <tbody>
${rows.join('\n')}
  </tbody>
</table>`;
}

/** Every sample, folded: why one failed is in its error. */
function renderSamples(samples: EvalSample[]): string {
  const rows = samples.map((s) => `    <tr data-case="${escapeHtml(s.caseId)}" data-agent="${escapeHtml(s.agent)}" data-index="${s.index}" data-solved="${s.solved}"><td>${
    escapeHtml(s.caseId)}</td><td>${escapeHtml(s.agent)}</td><td class="num">${s.index}</td><td class="${s.solved ? 'good-text' : 'poor-text'}">${
    s.solved ? '&#10003; solved' : '&#10007; not solved'}</td><td class="num">${s.score.toFixed(1)}</td><td>${s.builds ? 'yes' : 'no'}</td><td class="num">${
    s.testsPassed}/${s.testsPassed + s.testsFailed}</td><td>${escapeHtml(s.status)}</td><td class="num">${formatElapsed(s.latencyMs)}</td><td class="error">${
    escapeHtml(oneLine(s.error ?? ''))}</td></tr>`);
  return `<details class="samples">
<summary>Samples (${samples.length})</summary>
<table class="samples">
  <thead><tr><th>case</th><th>agent</th><th class="num">#</th><th>verdict</th><th class="num">score</th><th>builds</th><th class="num">tests passed</th><th>status</th><th class="num">latency</th><th>error</th></tr></thead>
  <tbody>
${rows.join('\n')}
  </tbody>
</table>
</details>`;
}

// The chart's geometry, in SVG units (pixels at 100%).
const BAR = 28;
const BAR_GAP = 4;
const GROUP_GAP = 28;
const PLOT = 140;
const TOP = 18;
const BOTTOM = 22;
const LEFT = 36;
const NAME_CHARS = 16;

/**
 * pass@k per agent as inline SVG: one group per agent, one bar per k (its
 * colour says which k: the legend under it), each labelled with its value;
 * an undefined pass@k has no bar and reads "n/a". SVG's geometry attributes
 * are not styles: the policy allows them.
 */
function renderChart(report: EvalReport): string {
  const ks = report.passK;
  const inner = Math.max(1, ks.length) * (BAR + BAR_GAP) - BAR_GAP;
  const group = inner + GROUP_GAP;
  const width = LEFT + report.agents.length * group;
  const height = TOP + PLOT + BOTTOM;
  const baseline = TOP + PLOT;
  const parts: string[] = [];
  for (const tick of [0, 0.5, 1]) {
    const y = baseline - tick * PLOT;
    parts.push(`  <line class="grid" x1="${LEFT - 4}" y1="${y}" x2="${width}" y2="${y}"></line>`,
      `  <text class="tick" x="${LEFT - 8}" y="${y + 4}" text-anchor="end">${tick.toFixed(1)}</text>`);
  }
  report.agents.forEach((a, i) => {
    const x0 = LEFT + GROUP_GAP / 2 + i * group;
    const bars = ks.map((k, j) => {
      const value = passAt(a.passAtK, k);
      const shown = value === null ? 0 : Math.max(0, Math.min(1, value));
      const h = shown * PLOT;
      const x = x0 + j * (BAR + BAR_GAP);
      return `    <rect class="bar k${j % SERIES}" x="${x}" y="${baseline - h}" width="${BAR}" height="${h}" data-agent="${escapeHtml(a.agent)}" data-k="${k}" data-value="${
        value === null ? 'null' : value}"><title>${escapeHtml(a.agent)} pass@${k} ${passText(value)}</title></rect>
    <text class="value" x="${x + BAR / 2}" y="${baseline - h - 4}" text-anchor="middle" data-k="${k}">${passText(value)}</text>`;
    });
    const label = a.agent.length > NAME_CHARS ? `${a.agent.slice(0, NAME_CHARS - 1)}…` : a.agent;
    parts.push(`  <g class="group" data-agent="${escapeHtml(a.agent)}">
${bars.join('\n')}
    <text class="name" x="${x0 + inner / 2}" y="${baseline + 16}" text-anchor="middle"><title>${escapeHtml(a.agent)}</title>${escapeHtml(label)}</text>
  </g>`);
  });
  const legend = ks.map((k, j) => `<span class="key"><span class="swatch k${j % SERIES}"></span>pass@${k}</span>`).join(' ');
  return `<h2>pass@k per agent</h2>
<svg class="chart" role="img" aria-label="pass@k per agent" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">
${parts.join('\n')}
</svg>
<p class="legend">${legend}</p>`;
}

/** The chart's colours, one per k in the order of passK; past the last they repeat. */
const SERIES = 6;

const STYLE = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); background: var(--vscode-editor-background); padding: 0 16px 16px; }
h1 { font-size: 1.3em; }
h2 { font-size: 1.1em; margin-top: 1.4em; }
.meta, .path, .note, .base { color: var(--vscode-descriptionForeground); }
.path a { color: var(--vscode-textLink-foreground); }
.status { font-size: 1.1em; display: flex; gap: 6px; align-items: baseline; }
.state { font-weight: bold; }
.state.completed, .state.finished, .good-text { color: var(--vscode-testing-iconPassed, #388a34); }
.state.cancelled, .state.interrupted, .state.unfinished { color: var(--vscode-editorWarning-foreground, #bf8803); }
.state.running { color: var(--vscode-progressBar-background, #0e70c0); }
.poor-text { color: var(--vscode-testing-iconFailed, #e51400); }
.empty { color: var(--vscode-descriptionForeground); font-style: italic; }
table { border-collapse: collapse; margin: 6px 0; }
th, td { padding: 3px 10px; border-bottom: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, #8884)); text-align: left; white-space: nowrap; }
th { font-weight: 600; color: var(--vscode-descriptionForeground); }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.na { color: var(--vscode-descriptionForeground); }
td.agent { font-weight: bold; }
td.error { white-space: normal; color: var(--vscode-errorForeground); max-width: 480px; }
.chart { display: block; overflow: visible; max-width: 100%; height: auto; }
.chart text { fill: var(--vscode-foreground); font-size: 11px; font-family: var(--vscode-font-family); }
.chart text.tick { fill: var(--vscode-descriptionForeground); }
.chart .grid { stroke: var(--vscode-panel-border, var(--vscode-widget-border, #8884)); stroke-width: 1; }
.k0 { fill: var(--vscode-charts-blue, #1a85ff); background: var(--vscode-charts-blue, #1a85ff); }
.k1 { fill: var(--vscode-charts-green, #388a34); background: var(--vscode-charts-green, #388a34); }
.k2 { fill: var(--vscode-charts-purple, #652d90); background: var(--vscode-charts-purple, #652d90); }
.k3 { fill: var(--vscode-charts-orange, #d18616); background: var(--vscode-charts-orange, #d18616); }
.k4 { fill: var(--vscode-charts-yellow, #cca700); background: var(--vscode-charts-yellow, #cca700); }
.k5 { fill: var(--vscode-charts-red, #e51400); background: var(--vscode-charts-red, #e51400); }
.legend { display: flex; gap: 14px; }
.key { display: inline-flex; gap: 4px; align-items: center; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; }
details.samples summary { cursor: pointer; margin-top: 1.4em; font-weight: 600; }
button { background: var(--vscode-button-background); color: var(--vscode-button-foreground); border: none; padding: 2px 10px; cursor: pointer; margin-left: 8px; }
button:hover { background: var(--vscode-button-hoverBackground); }
button.secondary { background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); }
`;

// The page is drawn again as the report grows: where it was scrolled to, and
// whether the samples were unfolded, are kept across (webview state).
const SCRIPT = `
const vscode = acquireVsCodeApi();
const state = vscode.getState() || {};
const samples = document.querySelector('details.samples');
if (samples && state.samplesOpen) samples.open = true;
if (state.scrollY) window.scrollTo(0, state.scrollY);
const save = (change) => vscode.setState({ ...(vscode.getState() || {}), ...change });
window.addEventListener('scroll', () => save({ scrollY: window.scrollY }));
samples?.addEventListener('toggle', () => save({ samplesOpen: samples.open }));
document.querySelector('.open-report')?.addEventListener('click', (event) => {
  event.preventDefault();
  vscode.postMessage({ type: 'openReport' });
});
document.querySelector('button.cancel')?.addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));
window.addEventListener('message', (event) => {
  const message = event.data;
  if (message?.type !== 'progress') return;
  const status = document.querySelector('.status');
  const counts = status?.querySelector('.counts');
  if (!status || !counts || status.dataset.status !== 'running') return;
  counts.textContent = message.text;
  status.dataset.done = message.done;
  status.dataset.total = message.total;
  status.dataset.solved = message.solved;
});
`;
