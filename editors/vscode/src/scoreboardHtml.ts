// The scoreboard's HTML: ranked cards, one bar per scoring dimension, the raw
// check output in expandable sections, and a Merge button on the card of each
// agent that can win (one that cannot is marked, with the CLI's error when it
// failed). A merged race says which agent was merged into which branch, and
// offers no Merge at all: a race gives one result. Each card also says what hydra would not merge by itself (flags),
// the protected files the agent changed, how its tests compare with the
// base's, its warnings, and, folded, the end of its stderr. A pure function
// of hydra/scores' answer, so the unit tests read what it renders. Test
// names, warnings and stderr come from the agent: all of it is escaped.
import type { AgentState, CheckResult, MergedRecord, Ranking, ScoresResult, TestChanges } from './protocol';
import {
  ALL_FAILED, COUNTS_ONLY, COUNTS_ONLY_WHY, TEST_CHANGE_KINDS, TEST_NAMES_SHOWN, allFailedReason, autoMergeLabel, capItems,
  countsOnlyText, deniedText, escapeHtml, testsOfKind,
  formatElapsed, formatPartScore, formatTotal, ineligibleLabel, mergedDetail, mergedText, scoreBand, tailLines, testCaseCounts, winnerMergeNote,
} from './format';

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
  /** What hydra/status says of each agent, by agentId. */
  agents?: Record<string, AgentNotes>;
  /** The race's merge (hydra/status' `merged`), once one of its agents was merged. */
  merged?: MergedRecord;
}

/** An agent's error (why it failed, in its CLI's words), warnings, denied tool calls and stderr tail. */
export type AgentNotes = Pick<AgentState, 'error' | 'warnings' | 'stderrTail' | 'deniedToolCalls'>;

// The Content-Security-Policy of hydra's webviews: nothing but the
// extension's own resources and the page's nonce-tagged style and script.
export function webviewCsp(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    `img-src ${cspSource}`,
    `font-src ${cspSource}`,
  ].join('; ');
}

export function renderScoreboard(scores: ScoresResult, page: ScoreboardPage): string {
  const csp = webviewCsp(page.cspSource, page.nonce);
  const merged = page.merged;
  const cards = scores.rankings.map((r) =>
    renderCard(r, r.agentId === scores.winner, page.agents?.[r.agentId] ?? {}, merged)).join('\n');
  let summary: string;
  if (merged) {
    // Said instead of what could be merged: nothing can, any more.
    const winner = scores.winner && scores.winner !== merged.agentId ? ` &middot; winner: ${escapeHtml(scores.winner)}` : '';
    summary = `<p class="summary merged"><span class="merged-note">${escapeHtml(mergedText(merged))}</span> <span class="merged-detail">(${
      escapeHtml(mergedDetail(merged))})</span>${winner}</p>`;
  } else if (scores.rankings.length === 0) {
    summary = '<p class="empty">No agent was ranked.</p>';
  } else if (scores.allFailed || !scores.winner) {
    summary = `<p class="summary all-failed"><strong class="poor-text">${ALL_FAILED}</strong> (${
      escapeHtml(allFailedReason(scores.rankings))}).</p>`;
  } else {
    const winner = scores.rankings.find((r) => r.agentId === scores.winner);
    const notAuto = autoMergeLabel(winner);
    const note = winnerMergeNote(scores, notAuto !== undefined);
    summary = `<p class="summary">Winner: <strong>${escapeHtml(scores.winner)}</strong>${
      note ? ` &middot; <span class="merge-note">${escapeHtml(note)}</span>` : ''}${
      notAuto ? ` &middot; <span class="warn-text">&#9888; ${escapeHtml(notAuto)}</span>` : ''}</p>`;
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

function renderCard(r: Ranking, isWinner: boolean, notes: AgentNotes, merged: MergedRecord | undefined): string {
  const bars = DIMENSIONS.map(([key, label, check]) =>
    renderBar(label, r.breakdown[key], check ? r.checks[check]?.skipped === true : false)).join('\n');
  const checks = (['build', 'tests', 'lint'] as const)
    .map((name) => renderCheck(name, r.checks[name]))
    .join('\n');
  const diff = r.diff;
  const cannotWin = ineligibleLabel(r);
  const flagged = (r.flags?.length ?? 0) > 0;
  const isMerged = merged?.agentId === r.agentId;
  const classes = `card${isWinner ? ' winner' : ''}${cannotWin ? ' ineligible' : ''}${flagged ? ' flagged' : ''}${isMerged ? ' merged' : ''}`;
  const error = notes.error;
  return `<section class="${classes}" data-agent="${escapeHtml(r.agentId)}" data-rank="${r.rank}">
  <header>
    <span class="rank">#${r.rank}</span>
    <span class="agent">${escapeHtml(r.agentId)}</span>${isWinner ? '\n    <span class="badge winner-badge">&#9733; winner</span>' : ''}${
  isMerged ? `\n    <span class="badge merged-badge">merged into ${escapeHtml(merged?.targetBranch || 'your branch')}</span>` : ''}
    <span class="status">${escapeHtml(r.status)}</span>
    <span class="total ${scoreBand(r.total)}" data-total="${r.total}">${formatTotal(r.total)}</span>
  </header>
${cannotWin ? `  <p class="cannot-win poor-text">${escapeHtml(cannotWin)}</p>\n` : ''}${
  error ? `  <p class="error">${escapeHtml(error)}</p>\n` : ''}${
  renderFlags(r, notes)}${renderProtected(r)}${renderTestChanges(r)}${renderWarnings(notes)}
  <div class="bars">
${bars}
  </div>
  <p class="meta">+${diff.linesAdded} &minus;${diff.linesRemoved} in ${diff.filesChanged} file(s)${
    r.durationMs !== undefined ? ` &middot; ${formatElapsed(r.durationMs)}` : ''}</p>
${checks}
${renderStderr(notes.stderrTail)}  <div class="actions">
${cannotWin || merged ? '' : renderMergeButton(r.agentId, isWinner)}    <button class="diff secondary" data-agent="${escapeHtml(r.agentId)}">Show Diff</button>
    <button class="all-changes secondary" data-agent="${escapeHtml(r.agentId)}" title="Every file ${escapeHtml(r.agentId)} changed, in one editor">All Changes</button>
  </div>
</section>`;
}

/** One dimension's bar: `n/a` when not configured, `--` when its check was skipped (the build failed), as the CLI shows them. */
function renderBar(label: string, value: number | null, skipped: boolean): string {
  const band = skipped ? 'none' : scoreBand(value);
  const shown = value === null ? 'n/a' : skipped ? '--' : formatPartScore(value);
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
  // Without the runner's summary line, the outcomes of its named test cases give the counts.
  const tests = check.tests ?? (check.testCases ? testCaseCounts(check.testCases) : null);
  const counts = tests ? `, ${tests.passed} passed, ${tests.failed} failed` : '';
  const lint = check.lint ? `, ${check.lint.errors} errors, ${check.lint.warnings} warnings` : '';
  return `  <details class="check" data-check="${name}">
    <summary>${name}: <code>${escapeHtml(check.command)}</code> (${escapeHtml(verdict)}${counts}${lint})</summary>
    <pre>${check.outputTruncated ? '[...]\n' : ''}${escapeHtml(check.output)}</pre>
  </details>`;
}

/**
 * A card's Merge button: the primary one only on the winner's card; any other
 * agent's is a secondary button (its merge asks first, and says why it is
 * not the winner), so that no losing card invites the same click.
 */
export function renderMergeButton(agentId: string, isWinner: boolean): string {
  const agent = escapeHtml(agentId);
  return isWinner
    ? `    <button class="merge" data-agent="${agent}" title="Merge the winner, ${agent}">Merge</button>\n`
    : `    <button class="merge secondary" data-agent="${agent}" title="${agent} is not the winner: merging it asks first">Merge</button>\n`;
}

/** Why hydra would not merge the agent by itself, as a badge: it may still win, and be merged by hand. */
function renderFlags(r: Ranking, notes: AgentNotes): string {
  const flags = r.flags ?? [];
  // A hydra that sends no flags yet may still count denials.
  const denied = flags.length === 0 ? deniedText(notes.deniedToolCalls) : undefined;
  const reasons = denied ? [denied] : flags;
  if (reasons.length === 0) return '';
  return `  <p class="flags"><span class="badge">&#9888; not for auto-merge</span> ${
    reasons.map((f) => `<span class="flag">${escapeHtml(f)}</span>`).join('; ')}</p>\n`;
}

function renderProtected(r: Ranking): string {
  const files = r.protectedChanges ?? [];
  if (files.length === 0) return '';
  const how = r.protectedMode === 'restore'
    ? 'its checks ran with the base versions put back' : 'its checks ran with its versions';
  return `  <p class="protected" data-mode="${escapeHtml(r.protectedMode ?? 'flag')}">Changed protected files: ${
    codeList(files, TEST_NAMES_SHOWN)} &middot; ${how}</p>\n`;
}

// fixed reads as good news, broken as bad, removed as a warning (counted as failed),
// skipped or xfailed now as bad (counted as failed: marking a failing test xfail is no fix).
const CHANGE_CLASSES: Record<keyof TestChanges, string> = {
  fixed: 'good-text', broken: 'poor-text', removed: 'warn-text', skipped: 'poor-text',
};

/** Tests fixed, broken, removed and skipped against the base; when they could not be compared by name, that they were not. */
function renderTestChanges(r: Ranking): string {
  const changes = r.testChanges;
  if (!changes) {
    if (!countsOnlyText(r)) return '';
    return `  <div class="test-changes">
    <p class="test-change" data-kind="counts-only"><span class="warn-text">${COUNTS_ONLY}</span>: ${escapeHtml(COUNTS_ONLY_WHY)}</p>
  </div>
`;
  }
  const rows = TEST_CHANGE_KINDS
    .filter(([kind]) => testsOfKind(changes, kind).length > 0)
    .map(([kind, label, meaning]) => {
      const tests = testsOfKind(changes, kind);
      return `    <p class="test-change" data-kind="${kind}"><span class="${CHANGE_CLASSES[kind]}">${
        tests.length} ${escapeHtml(label)}</span> (${escapeHtml(meaning)}): ${codeList(tests, TEST_NAMES_SHOWN)}</p>`;
    });
  if (rows.length === 0) rows.push('    <p class="test-change" data-kind="none">Tests as at the base: none fixed, broken, removed or skipped</p>');
  return `  <div class="test-changes">\n${rows.join('\n')}\n  </div>\n`;
}

/** The agent's warnings; the output channel has them all when there are many. */
function renderWarnings(notes: AgentNotes): string {
  const { shown, more } = capItems(notes.warnings ?? [], TEST_NAMES_SHOWN);
  if (shown.length === 0) return '';
  const items = shown.map((w) => `    <li>&#9888; ${escapeHtml(w)}</li>`);
  if (more > 0) items.push(`    <li>and ${more} more</li>`);
  return `  <ul class="warnings">\n${items.join('\n')}\n  </ul>\n`;
}

/** The end of the agent's stderr, folded: it explains a failure, and is noise otherwise. */
function renderStderr(tail: string | undefined): string {
  const lines = tailLines(tail, Number.POSITIVE_INFINITY);
  if (lines.length === 0) return '';
  return `  <details class="stderr">
    <summary>stderr (last ${lines.length === 1 ? 'line' : `${lines.length} lines`})</summary>
    <pre>${escapeHtml(lines.join('\n'))}</pre>
  </details>
`;
}

/** `<code>a</code>, <code>b</code> and 3 more`: a list of names from the agent's run, escaped. */
function codeList(names: string[], max: number): string {
  const { shown, more } = capItems(names, max);
  const list = shown.map((n) => `<code>${escapeHtml(n)}</code>`).join(', ');
  return more > 0 ? `${list} and ${more} more` : list;
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
.good-text { color: var(--vscode-testing-iconPassed, #388a34); }
.warn-text { color: var(--vscode-editorWarning-foreground, #bf8803); }
.card.flagged { border-color: var(--vscode-editorWarning-foreground, #bf8803); }
.flags, .protected, .test-change { margin: 4px 0; }
.badge { font-weight: bold; color: var(--vscode-editorWarning-foreground, #bf8803); border: 1px solid currentColor; border-radius: 3px; padding: 0 4px; }
.winner-badge { color: var(--vscode-charts-yellow, #cca700); }
.merged-badge { color: var(--vscode-charts-purple, #652d90); }
.card.merged { border-color: var(--vscode-charts-purple, #652d90); }
.merged-note { font-weight: bold; }
.merged-detail { color: var(--vscode-descriptionForeground); }
.test-change code, .protected code { overflow-wrap: anywhere; }
.warnings { margin: 4px 0; padding-left: 0; list-style: none; color: var(--vscode-editorWarning-foreground, #bf8803); white-space: pre-wrap; }
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
for (const button of document.querySelectorAll('button.all-changes')) {
  button.addEventListener('click', () => vscode.postMessage({ type: 'allChanges', agentId: button.dataset.agent }));
}
`;
