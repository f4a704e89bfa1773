// The scoreboard's HTML: ranked cards, one bar per scoring dimension, the raw
// check output in expandable sections, and a Merge button on the card of each
// agent that can win (one that cannot is marked, with the CLI's error when it
// failed). A pure function of hydra/scores' answer, so the unit tests read
// what it renders.
import type { CheckResult, Ranking, ScoresResult } from './protocol';
import { ALL_FAILED, allFailedReason, escapeHtml, formatElapsed, ineligibleLabel, scoreBand } from './format';

// Each dimension, and the check it comes from (none for diff size and speed).
const DIMENSIONS: Array<[keyof Ranking['breakdown'], string, keyof Ranking['checks'] | undefined]> = [
  ['build', 'Build', 'build'],
  ['tests', 'Tests', 'tests'],
  ['lint', 'Lint', 'lint'],
  ['diffSize', 'Diff size', undefined],
  ['speed', 'Speed', undefined],
];

export interface ScoreboardPage {
  /** The webview's csp source (webview.cspSource). */
  cspSource: string;
  /** A fresh random value: the only scripts and styles that run carry it. */
  nonce: string;
  task?: string;
  /** Each agent's error (hydra/status), by agentId: why it failed, in its CLI's words. */
  errors?: Record<string, string>;
}

export function renderScoreboard(scores: ScoresResult, page: ScoreboardPage): string {
  const csp = [
    "default-src 'none'",
    `style-src ${page.cspSource} 'nonce-${page.nonce}'`,
    `script-src 'nonce-${page.nonce}'`,
    `img-src ${page.cspSource}`,
    `font-src ${page.cspSource}`,
  ].join('; ');
  const cards = scores.rankings.map((r) => renderCard(r, r.agentId === scores.winner, page.errors?.[r.agentId])).join('\n');
  let summary: string;
  if (scores.rankings.length === 0) {
    summary = '<p class="empty">No agent was ranked.</p>';
  } else if (scores.allFailed || !scores.winner) {
    summary = `<p class="summary all-failed"><strong class="poor-text">${ALL_FAILED}</strong> (${
      escapeHtml(allFailedReason(scores.rankings))}).</p>`;
  } else {
    summary = `<p class="summary">Winner: <strong>${escapeHtml(scores.winner)}</strong>${
      // Whether auto_merge is on is hydra.toml's business: say only what the total reaches.
      scores.autoMergeEligible ? ' &middot; its total reaches auto_merge_minimum' : ''}</p>`;
  }
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>Hydra scoreboard</title>
<style nonce="${page.nonce}">${STYLE}</style>
</head>
<body>
<h1>Race ${escapeHtml(scores.raceId)}</h1>
${page.task ? `<p class="task">${escapeHtml(page.task)}</p>` : ''}
${summary}
<div class="cards">
${cards}
</div>
<script nonce="${page.nonce}">${SCRIPT}</script>
</body>
</html>`;
}

function renderCard(r: Ranking, isWinner: boolean, error: string | undefined): string {
  const bars = DIMENSIONS.map(([key, label, check]) =>
    renderBar(label, r.breakdown[key], check ? r.checks[check]?.skipped === true : false)).join('\n');
  const checks = (['build', 'tests', 'lint'] as const)
    .map((name) => renderCheck(name, r.checks[name]))
    .join('\n');
  const diff = r.diff;
  const cannotWin = ineligibleLabel(r);
  const classes = `card${isWinner ? ' winner' : ''}${cannotWin ? ' ineligible' : ''}`;
  return `<section class="${classes}" data-agent="${escapeHtml(r.agentId)}" data-rank="${r.rank}">
  <header>
    <span class="rank">#${r.rank}</span>
    <span class="agent">${escapeHtml(r.agentId)}</span>
    <span class="status">${escapeHtml(r.status)}</span>
    <span class="total ${scoreBand(r.total)}" data-total="${r.total}">${r.total.toFixed(1)}</span>
  </header>
${cannotWin ? `  <p class="cannot-win poor-text">${escapeHtml(cannotWin)}</p>\n` : ''}${
  error ? `  <p class="error">${escapeHtml(error)}</p>\n` : ''}
  <div class="bars">
${bars}
  </div>
  <p class="meta">+${diff.linesAdded} &minus;${diff.linesRemoved} in ${diff.filesChanged} file(s)${
    r.durationMs !== undefined ? ` &middot; ${formatElapsed(r.durationMs)}` : ''}</p>
${checks}
  <div class="actions">
${cannotWin ? '' : `    <button class="merge" data-agent="${escapeHtml(r.agentId)}">Merge</button>\n`}    <button class="diff secondary" data-agent="${escapeHtml(r.agentId)}">Show Diff</button>
  </div>
</section>`;
}

/** One dimension's bar: `n/a` when not configured, `--` when its check was skipped (the build failed), as the CLI shows them. */
function renderBar(label: string, value: number | null, skipped: boolean): string {
  const band = skipped ? 'none' : scoreBand(value);
  const shown = value === null ? 'n/a' : skipped ? '--' : value.toFixed(0);
  const width = skipped ? 0 : value ?? 0;
  return `    <div class="bar-row" data-dimension="${escapeHtml(label)}">
      <span class="label">${label}</span>
      <span class="bar"><span class="fill ${band}" data-value="${width}"></span></span>
      <span class="value">${shown}</span>
    </div>`;
}

function renderCheck(name: string, check: CheckResult | null): string {
  if (!check) return '';
  let verdict: string;
  if (check.skipped) verdict = 'skipped';
  else if (check.timedOut) verdict = 'timed out';
  else if (check.error) verdict = `could not run: ${check.error}`;
  else verdict = `exit ${check.exitCode ?? 'signal ' + (check.signal ?? '?')}`;
  const counts = check.tests ? `, ${check.tests.passed} passed, ${check.tests.failed} failed` : '';
  const lint = check.lint ? `, ${check.lint.errors} errors, ${check.lint.warnings} warnings` : '';
  return `  <details class="check" data-check="${name}">
    <summary>${name}: <code>${escapeHtml(check.command)}</code> (${escapeHtml(verdict)}${counts}${lint})</summary>
    <pre>${check.outputTruncated ? '[...]\n' : ''}${escapeHtml(check.output)}</pre>
  </details>`;
}

const STYLE = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); background: var(--vscode-editor-background); padding: 0 16px 16px; }
h1 { font-size: 1.3em; }
.task { color: var(--vscode-descriptionForeground); white-space: pre-wrap; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 12px; }
.card { border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, #8884)); border-radius: 6px; padding: 10px 12px; background: var(--vscode-sideBar-background); }
.card.winner { border-color: var(--vscode-focusBorder); }
.card.ineligible { opacity: 0.85; border-style: dashed; }
.cannot-win { font-weight: bold; margin: 4px 0; }
.error { white-space: pre-wrap; font-family: var(--vscode-editor-font-family); color: var(--vscode-errorForeground); margin: 4px 0; }
header { display: flex; gap: 8px; align-items: baseline; }
.rank { font-weight: bold; }
.agent { font-weight: bold; flex: 1; }
.status { color: var(--vscode-descriptionForeground); }
.total { font-size: 1.4em; font-weight: bold; }
.bar-row { display: grid; grid-template-columns: 72px 1fr 36px; gap: 6px; align-items: center; margin: 4px 0; }
.bar { height: 8px; background: var(--vscode-editorWidget-background, #8882); border-radius: 4px; overflow: hidden; }
.fill { display: block; height: 100%; width: 0; }
.value { text-align: right; font-variant-numeric: tabular-nums; }
.fill.good { background: var(--vscode-testing-iconPassed, #388a34); }
.fill.fair { background: var(--vscode-editorWarning-foreground, #bf8803); }
.fill.poor { background: var(--vscode-testing-iconFailed, #e51400); }
.total.good { color: var(--vscode-testing-iconPassed, #388a34); }
.total.fair { color: var(--vscode-editorWarning-foreground, #bf8803); }
.total.poor, .poor-text { color: var(--vscode-testing-iconFailed, #e51400); }
.meta { color: var(--vscode-descriptionForeground); }
details pre { max-height: 240px; overflow: auto; background: var(--vscode-textCodeBlock-background); padding: 6px; white-space: pre-wrap; font-family: var(--vscode-editor-font-family); }
.actions { display: flex; gap: 8px; margin-top: 8px; }
button { background: var(--vscode-button-background); color: var(--vscode-button-foreground); border: none; padding: 4px 12px; cursor: pointer; }
button:hover { background: var(--vscode-button-hoverBackground); }
button.secondary { background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); }
`;

// Bar widths are set from script: the policy allows no inline style attributes.
const SCRIPT = `
const vscode = acquireVsCodeApi();
for (const fill of document.querySelectorAll('.fill')) {
  fill.style.width = Math.max(0, Math.min(100, Number(fill.dataset.value))) + '%';
}
for (const button of document.querySelectorAll('button.merge')) {
  button.addEventListener('click', () => vscode.postMessage({ type: 'merge', agentId: button.dataset.agent }));
}
for (const button of document.querySelectorAll('button.diff')) {
  button.addEventListener('click', () => vscode.postMessage({ type: 'diff', agentId: button.dataset.agent }));
}
`;
