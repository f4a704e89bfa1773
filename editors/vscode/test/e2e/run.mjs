// End to end in a real VS Code: code-server (VS Code 1.100) with the built
// .vsix installed, driven in Debian's chromium by playwright-core; a probe
// extension reports what VS Code's API says (diagnostics, the active diff's
// two sides), which the browser cannot see.
//  1. race: a throwaway git repository with two scripted agents; a race
//     started from the empty view's welcome button; then what the user sees
//     is checked: the agent pick, the agents' output channels and their
//     terminals side by side (opened as the race starts, then again from what
//     hydra stored), the scoreboard
//     (against hydra/scores asked directly), the breaker's build error as a
//     diagnostic on its worktree's file, the view's rows and each of their
//     inline buttons (diffs, output, scoreboard, merges, with a warning for
//     the agent that lost, cancels), Compare Agents, Show All Changes and
//     Compare All Changes in the changes editor, the race shown as
//     merged everywhere once merged (and its findings gone), a race every
//     agent fails, races cancelled, the view's title buttons (Start Race,
//     Show Race History, Clean Up), Clean Up Race, and a broken hydra.toml
//     reported once, as a diagnostic at its line, cleared once fixed.
//  2. history: races this VS Code never watched (raced through another hydra
//     serve before it opened): an agent's output as a transcript of what
//     hydra stored, its raw log, an agent that failed marked as unable to
//     win (no Merge anywhere, its error shown), a race every agent failed
//     said to have no winner, a race merged elsewhere refused in hydra's
//     words and then shown as merged, and one change of an agent's two taken
//     into the working tree.
//  3. agents: races hydra refuses for an agent (its binary went away after
//     the pick listed it; renamed in hydra.toml meanwhile), what the user is
//     told (hydra's problem, its "did you mean") and offered (pick again,
//     race with the suggested name), and auto_merge merging the winner.
//  4. collab: collaborations of a scripted builder and reviewer: one run
//     through another hydra serve first (its notifications checked against
//     the protocol, then shown from hydra/races), one started from the
//     palette (agent picks, progress, live phases, iterations with scores,
//     the review as Markdown, an iteration's diff, all of an iteration's
//     changes and both iterations' side by side in the changes editor,
//     merging builder@2), one
//     cancelled from its progress notification.
//  5. untrusted: the same kind of repository in an untrusted workspace: no
//     race starts and hydra is never even started.
//  6. eval: the demo project with this repository's eval set
//     (examples/eval/shopcart.toml): Run Eval Set with arguments from a
//     keybinding (careful and alternating, two samples each), its panel
//     counting the samples and then showing pass@k (tables and chart)
//     against the report on disk; Open Eval Report on that report (from the
//     palette's dialog and from the explorer's context menu); a broken
//     set from the explorer's context menu, said at its file:line:column
//     with a button that puts the cursor there; the set as it is, from its
//     editor, cancelled from its progress notification, then again from the
//     panel's Cancel button.
// Screenshots of every step go to $HYDRA_E2E_SHOTS.
//
// Environment: HYDRA_BIN (hydra binary), HYDRA_VSIX (the packaged extension),
// HYDRA_PROBE_VSIX (the probe extension, test/e2e/probe), HYDRA_E2E_TOOLS
// (where install-tools.sh put code-server and playwright-core),
// HYDRA_E2E_SHOTS (screenshot folder), HYDRA_E2E_PORT (default: free ports;
// when set, the other scenarios use the next ones).
import fs from 'node:fs';
import path from 'node:path';
import { git, hydraRoot, makeDemoRepo, makeRepo } from './repo.mjs';
import { HydraRpc } from './rpc.mjs';
import { Workbench, check, freePort, log, need, plain, results, runFolder, shots, waitFor } from './harness.mjs';

const hydra = need('HYDRA_BIN');
const vsix = need('HYDRA_VSIX');
const fixedPort = Number(process.env.HYDRA_E2E_PORT || 0);
const port = async (n) => (fixedPort ? fixedPort + n : freePort());

/** The frame of the scoreboard webview (VS Code nests it in two iframes). */
async function scoreboardFrame(page) {
  for (const frame of page.frames()) {
    try {
      if (await frame.locator('section.card').count() > 0) return frame;
    } catch { /* a frame being torn down */ }
  }
  return undefined;
}

/** The scoreboard frame whose summary matches `pattern` (a hidden panel's frame may linger). */
async function scoreboardSaying(page, pattern) {
  for (const frame of page.frames()) {
    try {
      if (await frame.locator('p.summary').count() > 0 && pattern.test(await frame.locator('p.summary').innerText())) return frame;
    } catch { /* a frame being torn down */ }
  }
  return undefined;
}

/** The race, agent and side a `hydra:` document URI names (VS Code writes its query escaped). */
function hydraSide(uri) {
  const [where, query = ''] = (uri ?? '').split('?');
  const q = new URLSearchParams(decodeURIComponent(query));
  return { path: decodeURIComponent(where.replace(/^hydra:\/*/, '')), race: q.get('race'), agent: q.get('agent'), side: q.get('side') };
}

const RACE_ID = /race (\d{8}-\d{6}-[0-9a-f]+)/;

/** Starts a race from the task box that is open: types the task, adjusts the agent pick with `tick`, accepts. Answers the race id. */
async function startFromTaskBox(wb, task, tick = async () => undefined) {
  const page = wb.page;
  await page.locator('.quick-input-widget input').waitFor({ state: 'visible' });
  await page.keyboard.type(task);
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'fixer' }).first().waitFor({ timeout: 30000 });
  await tick();
  await page.keyboard.press('Enter');
  // The start is said in the status bar, for a moment: no toast to pile up.
  // (The previous race's message may still be there.)
  const text = await waitFor(async () => {
    for (const t of await page.locator('.statusbar-item', { hasText: 'started with' }).allInnerTexts()) {
      const id = RACE_ID.exec(t)?.[1];
      if (id && !startedRaces.has(id)) return t;
    }
    return undefined;
  }, 30000, 'the status bar to say the race started');
  const raceId = RACE_ID.exec(text)[1];
  startedRaces.add(raceId);
  return { raceId, text: text.trim() };
}
const startedRaces = new Set();

/** A scenario that stopped on an error: the failure, and a screenshot of where it happened. */
async function scenarioFailed(wb, scenario, e) {
  check(false, `${scenario} scenario: ${e.message}`);
  try { await wb?.shot('error'); } catch { /* the page is gone */ }
}

/** The agent pick's rows on screen, in order: each agent's name and whether it is marked not available. */
async function agentRows(page) {
  const rows = await page.locator('.quick-input-list .monaco-list-row').evaluateAll((els) => els
    .filter((r) => !r.querySelector('.quick-input-list-separator-as-item'))
    .map((r) => ({
      index: Number(r.getAttribute('data-index')),
      name: (r.querySelector('.label-name')?.textContent ?? '').trim(),
      unavailable: /not available/.test(r.querySelector('.label-description')?.textContent ?? ''),
      detail: (r.querySelector('.quick-input-list-label-meta')?.textContent ?? '').trim(),
    })));
  return rows.sort((a, b) => a.index - b.index);
}

const checkedRows = (page) => page.locator('.quick-input-list .monaco-list-row input[type=checkbox]:checked, .quick-input-list .monaco-list-row .monaco-custom-toggle.checked');

async function raceScenario() {
  const run = runFolder('race');
  // The agents think for 3 s: long enough to see the race run. sleeper and
  // dozer think for a minute: the races that are cancelled race them.
  const repo = makeRepo(path.join(run, 'calc'), {
    agentDelaySeconds: 3,
    extraAgents: [{ name: 'sleeper', mode: 'fix', delaySeconds: 60 }, { name: 'dozer', mode: 'fix', delaySeconds: 60 }],
  });
  // The terminals' text in the DOM (not drawn on a canvas), where the test reads it.
  const settings = {
    'hydra.serverPath': hydra, 'hydra.defaultAgents': ['fixer', 'breaker'], 'hydra.logLevel': 'debug', 'terminal.integrated.gpuAcceleration': 'off',
  };
  let wb;
  let rpc;
  try {
    wb = await Workbench.open({ run, folder: repo, settings, vsix, port: await port(0), trust: true, prefix: 'race' });
    const page = wb.page;
    await page.locator('.activitybar [aria-label^="Hydra"]').first().waitFor({ timeout: 30000 });
    check(true, 'the .vsix is installed and VS Code shows the Hydra view container');
    rpc = new HydraRpc(hydra, repo);
    await rpc.initialize();

    // The empty view says what Hydra does, with a button to start.
    let sidebar = await wb.hydraView();
    const welcome = sidebar.locator('.welcome-view-content').first();
    await welcome.waitFor({ timeout: 20000 });
    // On a slow start the view may first show the untrusted welcome, until VS Code has applied the trust setting.
    const welcomeText = await waitFor(async () => {
      const t = (await welcome.innerText()).replace(/\s+/g, ' ');
      return /No race yet/.test(t) ? t : undefined;
    }, 20000, 'the welcome of a trusted workspace').catch(async () => (await welcome.innerText()).replace(/\s+/g, ' '));
    check(/No race yet/.test(welcomeText) && /hydra\.toml/.test(welcomeText), `the empty view welcomes: ${welcomeText}`);
    await wb.shot('welcome');
    await welcome.locator('.monaco-button', { hasText: 'Start Race' }).click();

    // The task, then the agents (hydra.defaultAgents already picked); an
    // agent that is not installed cannot be ticked.
    let unavailable;
    const { raceId, text: startedText } = await startFromTaskBox(wb, 'Make add() add its arguments', async () => {
      const checked = await checkedRows(page).count();
      check(checked === 2, `the agent pick lists hydra/agents with hydra.defaultAgents picked (${checked} checked)`);
      const order = await agentRows(page);
      const firstUnavailable = order.findIndex((r) => r.unavailable);
      check(firstUnavailable > 0 && order.slice(firstUnavailable).every((r) => r.unavailable) &&
        await page.locator('.quick-input-list .quick-input-list-separator', { hasText: 'not available' }).first().isVisible(),
      `the agents that are not available are listed apart, under "not available": ${order.map((r) => r.name).join(', ')}`);
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'not available' }).first();
      unavailable = (await row.locator('.label-name').first().innerText()).trim();
      await row.click();
      const title = await waitFor(async () => {
        const t = await page.locator('.quick-input-title').innerText();
        return /is not available/.test(t) ? t : undefined;
      }, 10000, 'the reason in the title');
      const after = await checkedRows(page).count();
      // hydra's reason, without the search path it quotes (the row has it whole).
      check(after === 2 && title.includes(`${unavailable} is not available: `) && !/\(\/[^)]*:/.test(title),
        `ticking ${unavailable}, not available, leaves it unticked and says why: ${title}`);
      await wb.shot('agents');
    });
    check(Boolean(raceId), `race started: ${startedText}`);
    check(await wb.toastCount('started with') === 0, 'no toast says the race started (the status bar does)');
    // While it runs: hydra's $/progress as a notification, and the status bar item.
    const progress = await wb.toast('Racing 2 agents');
    check(/Racing 2 agents/.test(progress), `the race's progress is a notification: ${progress}`);
    const status = page.locator('.statusbar-item', { hasText: 'agents done' }).first();
    await status.waitFor({ timeout: 10000 });
    check(/agents done/.test(await status.innerText()), `a status bar item shows the race: ${await status.innerText()}`);
    const { races: [raced] } = await rpc.request('hydra/status', { raceId });
    check(raced.agents.map((a) => a.agentId).sort().join() === 'breaker,fixer' && !raced.agents.some((a) => a.agentId === unavailable),
      `only the available agents race: ${raced.agents.map((a) => a.agentId).join(', ')}`);
    await wb.shot('race-running');

    // The scoreboard opens by itself once the race is scored.
    const frame = await waitFor(() => scoreboardFrame(page), 90000, 'the scoreboard');
    const cards = await frame.locator('section.card').evaluateAll((els) => els.map((e) => ({
      agentId: e.dataset.agent, rank: Number(e.dataset.rank), total: Number(e.querySelector('.total').dataset.total),
      band: e.querySelector('.total').className.replace('total', '').trim(),
    })));
    const scores = await rpc.request('hydra/scores', { raceId });
    const expected = scores.rankings.map((r) => ({ agentId: r.agentId, rank: r.rank, total: r.total }));
    check(JSON.stringify(cards.map(({ band, ...c }) => c)) === JSON.stringify(expected),
      `the scoreboard shows the ranking hydra/scores returns: ${JSON.stringify(cards)}`);
    check(cards[0]?.agentId === 'fixer' && cards[0].band === 'good' && cards.at(-1)?.band === 'poor',
      'the winner is green and the broken agent red');
    const skippedTests = await frame.locator('section.card[data-agent="breaker"] [data-dimension="Tests"] .value').innerText();
    check(skippedTests === '--' && scores.rankings[1].checks.tests.skipped,
      `tests skipped because the build failed show "--", as the CLI does: ${skippedTests}`);
    const summary = await frame.locator('p.summary').innerText();
    check(scores.autoMergeEnabled !== true && !/automatic|auto_merge/.test(summary) && /eligible to merge/.test(summary),
      `with auto_merge off, nothing speaks of merging automatically (autoMergeEnabled: ${scores.autoMergeEnabled}): ${summary}`);
    const badges = await frame.locator('section.card .winner-badge').evaluateAll((els) => els.map((e) => e.closest('section').dataset.agent));
    check(badges.join() === 'fixer', `the winner's card, and only it, wears a winner badge: ${badges.join(', ')}`);
    await frame.locator('section.card[data-agent="breaker"] details[data-check="build"] summary').click();
    const buildOutput = await frame.locator('section.card[data-agent="breaker"] details[data-check="build"] pre').innerText();
    check(/Syntax error|unexpected|expecting/i.test(buildOutput), `the raw build output expands: ${buildOutput.trim()}`);
    await page.waitForTimeout(300);
    await wb.shot('scoreboard');
    // The card's Merge button asks first; Cancel leaves the repository alone.
    const headAtScore = git(repo, 'rev-parse', 'HEAD');
    await frame.locator('section.card[data-agent="fixer"] button.merge').click();
    const ask = await wb.dialog();
    await ask.press('Cancel');
    check(/Merge fixer, the winner, into main\?/.test(ask.text) && git(repo, 'rev-parse', 'HEAD') === headAtScore,
      `the scoreboard's Merge button shows the dry run, and Cancel changes nothing: ${ask.text}`);

    // Every agent's output at once: a terminal per agent, opened as each started (hydra.showAllOutputsOnRaceStart
    // is on by default), named in full, filled live; Show All Agents' Output brings them forward.
    const agentTerminals = () => (wb.probe().terminals ?? []).filter((n) => n.startsWith('hydra: ')).sort();
    const terminalNamed = (names) => names.length === 2 && names.every((n, i) => {
      const m = /^hydra: (\S+) \((\S+)\)$/.exec(n);
      return m && m[1] === ['breaker', 'fixer'][i] && m[2].length >= 8 && raceId.startsWith(m[2]);
    });
    const liveNames = await waitFor(() => terminalNamed(agentTerminals()) && agentTerminals(), 20000, 'a terminal per agent')
      .catch(agentTerminals);
    check(terminalNamed(liveNames), `a terminal per agent opened as the race started, named in full: ${liveNames.join(', ')}`);
    const terminalTexts = () => page.locator('.part.panel .xterm-rows').evaluateAll((els) => els.map((e) => e.innerText)).then((ts) => ts.map(plain));
    const bothShown = async (finished) => {
      const texts = await terminalTexts();
      const fixer = texts.find((t) => /fix: fixed add\(\) in lib\.sh/.test(t));
      const breaker = texts.find((t) => /break: rewriting lib\.sh from scratch/.test(t));
      return texts.length === 2 && fixer && breaker && finished.test(fixer) && /\[stderr\] fix: a remark on stderr/.test(fixer) ? texts : undefined;
    };
    await wb.palette("Hydra: Show All Agents' Output");
    await wb.pick(raceId);
    const liveTexts = await waitFor(() => bothShown(/\[hydra: fixer completed, exit code 0\]/), 20000, 'both agents\' output in their terminals')
      .catch(terminalTexts);
    check(Boolean(await bothShown(/\[hydra: fixer completed, exit code 0\]/)),
      `both agents' terminals show at once, side by side, each its agent's output and how it ended: ${
        liveTexts.map((t) => t.replace(/\s+/g, ' ').slice(0, 160)).join(' | ')}`);
    await wb.shot('all-outputs-live');
    // Closed, then opened again from the race's context menu: filled from what hydra stored.
    await wb.palette('Terminal: Kill All Terminals');
    await waitFor(() => agentTerminals().length === 0, 20000, 'the terminals to close');
    sidebar = await wb.hydraView();
    const racedRow = sidebar.locator('.monaco-list-row', { hasText: 'Make add() add its arguments' }).first();
    await wb.contextMenu(racedRow, "Show All Agents' Output");
    const storedNames = await waitFor(() => terminalNamed(agentTerminals()) && agentTerminals(), 20000, 'the terminals again')
      .catch(agentTerminals);
    const storedTexts = await waitFor(() => bothShown(/\[hydra: fixer completed/), 20000, 'the stored output in the terminals')
      .catch(terminalTexts);
    check(terminalNamed(storedNames) && Boolean(await bothShown(/\[hydra: fixer completed/)),
      `Show All Agents' Output on a finished race fills each agent's terminal with what hydra stored: ${storedNames.join(', ')}: ${
        storedTexts.map((t) => t.replace(/\s+/g, ' ').slice(0, 160)).join(' | ')}`);
    await page.mouse.move(900, 300);
    await wb.shot('all-outputs-stored');

    // The breaker's build error (build.sh prints it as compilers do: lib.sh:3:1: error: ...) is a
    // diagnostic on lib.sh in the breaker's worktree, as vscode.languages.getDiagnostics() says.
    const { races: [scored] } = await rpc.request('hydra/status', { raceId });
    const breakerTree = scored.agents.find((a) => a.agentId === 'breaker').worktree;
    const breakerLib = path.join(breakerTree, 'lib.sh');
    const finding = scores.rankings.find((r) => r.agentId === 'breaker').checks.build.findings?.[0];
    const found = await wb.waitProbe((p) => p.diagnostics[breakerLib], "the breaker's build error as a diagnostic").catch(() => []);
    check(finding?.path === 'lib.sh' && finding.line === 3 && found.length === 1 && found[0].line === finding.line - 1 &&
      found[0].character === 0 && found[0].severity === 0 && found[0].source === 'hydra build' && /"fi" unexpected/.test(found[0].message),
    `the breaker's build error (${finding?.path}:${finding?.line}:${finding?.column}) is an error on line ${finding?.line} of lib.sh in its worktree: ${
      JSON.stringify(found)}`);
    const fixerTree = scored.agents.find((a) => a.agentId === 'fixer').worktree;
    check(!Object.keys(wb.probe().diagnostics).some((f) => f.startsWith(fixerTree)), 'the fixer, whose build passed, has none');
    // The Problems panel lists it.
    await wb.palette('Problems: Focus on Problems View');
    const problem = page.locator('.markers-panel .monaco-list-row', { hasText: '"fi" unexpected' }).first();
    await problem.waitFor({ timeout: 20000 });
    check(true, `the Problems panel lists it: ${(await problem.innerText()).replace(/\n/g, ' ')}`);
    await wb.shot('finding');

    // The agent's output channel, filled from hydra/agentOutput.
    await wb.palette('Hydra: Show Agent Output');
    await wb.pick(raceId);
    await wb.pick('fixer');
    const outputText = () => page.locator('.part.panel .view-lines')
      .evaluateAll((els) => els.map((e) => e.innerText).join('\n')).then(plain);
    await waitFor(async () => /fix: fixed add\(\) in lib\.sh/.test(await outputText()), 30000, 'the fixer output channel');
    const text = await outputText();
    check(/fix: task is 'Make add\(\) add its arguments'/.test(text) && /\[stderr\] fix: a remark on stderr/.test(text),
      'the output channel holds the agent\'s stdout and stderr lines');
    await wb.shot('output-channel');

    // The Hydra view: race -> agents by rank -> changed files; clicking a file opens the diff editor.
    sidebar = await wb.hydraView();
    const raceRow = sidebar.locator('.monaco-list-row', { hasText: 'Make add() add its arguments' }).first();
    await raceRow.waitFor({ timeout: 20000 });
    if ((await raceRow.getAttribute('aria-expanded')) !== 'true') await raceRow.click();
    // Agent rows only: the race's own row names its winner too.
    const agentRow = sidebar.locator('.monaco-list-row[aria-level="2"]', { hasText: 'fixer' }).first();
    const breakerRow = sidebar.locator('.monaco-list-row[aria-level="2"]', { hasText: 'breaker' }).first();
    await agentRow.waitFor({ timeout: 20000 });
    await breakerRow.waitFor({ timeout: 20000 });
    const agentOrder = await sidebar.locator('.monaco-list-row[aria-level="2"] .label-name').allInnerTexts();
    check(agentOrder.join() === 'fixer,breaker', `the view lists the agents by rank, not by name: ${agentOrder.join(', ')}`);
    if ((await agentRow.getAttribute('aria-expanded')) !== 'true') await agentRow.click();
    const fileRow = sidebar.locator('.monaco-list-row', { hasText: 'lib.sh' }).first();
    await fileRow.waitFor({ timeout: 20000 });
    const agentLabel = await agentRow.innerText();
    const star = await agentRow.locator('.codicon-star-full').count();
    const breakerStar = await breakerRow.locator('.codicon-star-full').count();
    check(/completed/.test(agentLabel) && /#1/.test(agentLabel) && /winner/.test(agentLabel) && star === 1 && breakerStar === 0,
      `the view shows the agent's state, score and that it won, with a star: ${agentLabel.replace(/\n/g, ' ')}`);
    await fileRow.click();
    const diffEditor = page.locator('.monaco-diff-editor').first();
    await diffEditor.waitFor({ timeout: 20000 });
    const side = async (which) => plain(await diffEditor.locator(`.editor.${which} .view-lines`).innerText());
    await waitFor(async () => /\+ \$2/.test(await side('modified')), 20000, 'the agent side');
    const left = await side('original');
    const right = await side('modified');
    check(/\$1 - \$2/.test(left) && /\$1 \+ \$2/.test(right), 'the diff editor shows base and agent versions of lib.sh');
    await wb.shot('diff-editor');

    // Compare Agents: the race, the first agent (the other is the only one left to compare it with), a file either changed.
    await wb.palette('Hydra: Compare Agents');
    await wb.pick(raceId);
    await wb.pick('fixer');
    await wb.pick('lib.sh');
    await wb.waitActiveTab(/lib\.sh \(fixer ↔ breaker\)/, 'the comparison');
    const compared = await wb.waitProbe((p) => p.activeTab?.kind === 'diff' && /fixer ↔ breaker/.test(p.activeTab.label) &&
      p.activeTab.originalText !== undefined && p.activeTab.modifiedText !== undefined && p.activeTab, 'the comparison\'s two sides');
    const agentsLib = async (agentId) => (await rpc.request('hydra/diff', { raceId, agentId, path: 'lib.sh' })).agent;
    const [l, r] = [hydraSide(compared.original), hydraSide(compared.modified)];
    check(l.path === 'lib.sh' && l.agent === 'fixer' && l.side === 'agent' && r.path === 'lib.sh' && r.agent === 'breaker' && r.side === 'agent' &&
      compared.originalText === await agentsLib('fixer') && compared.modifiedText === await agentsLib('breaker') &&
      compared.originalText !== compared.modifiedText,
    `Compare Agents opens a diff of the fixer's lib.sh (left) and the breaker's (right): ${compared.original} ↔ ${compared.modified}`);
    await wb.shot('compare-agents');

    // Show All Changes from the fixer's context menu: every file it changed at once, in VS Code's changes
    // editor; CHANGELOG.md, which it added, with nothing on the left.
    const changesEditor = page.locator('.part.editor .editor-group-container.active .editor-container').first();
    const changesText = async () => plain(await changesEditor.innerText());
    await wb.contextMenu(agentRow, 'Show All Changes');
    const allTab = await wb.waitActiveTab(/All changes \(base ↔ fixer\)/, 'the changes editor of the fixer');
    const allText = await waitFor(async () => {
      const t = await changesText();
      return /CHANGELOG\.md/.test(t) && /lib\.sh/.test(t) && /\$1 \+ \$2/.test(t) && /add\(\) adds/.test(t) ? t : undefined;
    }, 20000, 'both files of the fixer in the changes editor').catch(changesText);
    check(/CHANGELOG\.md/.test(allText) && /lib\.sh/.test(allText) && /\$1 \+ \$2/.test(allText) && /add\(\) adds/.test(allText),
      `Show All Changes opens "${allTab}" with both files the fixer changed, lib.sh's fix and the added CHANGELOG.md: ${
        allText.replace(/\s+/g, ' ').slice(0, 300)}`);
    await page.mouse.move(900, 450); // the row's tooltip would cover the editor in the screenshot
    await wb.shot('all-changes');
    // Compare All Changes from the race's context menu: the first agent, then the only other one; the
    // fixer (the winner) on the left. The breaker did not write CHANGELOG.md: only the fixer's side has it.
    await wb.contextMenu(raceRow, 'Compare All Changes of Two Agents');
    await wb.pick('breaker');
    const bothTab = await wb.waitActiveTab(/All changes \(fixer ↔ breaker\)/, 'the changes editor of both agents');
    const bothText = await waitFor(async () => {
      const t = await changesText();
      return /CHANGELOG\.md/.test(t) && /lib\.sh/.test(t) && /\$1 \+ \$2/.test(t) && /^fi$/m.test(t) ? t : undefined;
    }, 20000, 'both agents\' files in the changes editor').catch(changesText);
    check(/CHANGELOG\.md/.test(bothText) && /lib\.sh/.test(bothText) && /\$1 \+ \$2/.test(bothText) && /^fi$/m.test(bothText),
      `Compare All Changes opens "${bothTab}": every file either changed, the fixer's lib.sh beside the breaker's: ${
        bothText.replace(/\s+/g, ' ').slice(0, 300)}`);
    await page.mouse.move(900, 450);
    await wb.shot('compare-all-changes');
    // Take This Change in the changes editor, the cursor on the breaker's "fi" (its side, the right): as in a
    // two-agent diff, the take names the breaker's change before it takes anything; Cancel takes nothing.
    const libBefore = fs.readFileSync(path.join(repo, 'lib.sh'), 'utf8');
    const fiLine = changesEditor.locator('.editor.modified .view-line', { hasText: /^\s*fi\s*$/ }).first();
    await fiLine.waitFor({ timeout: 20000 });
    await fiLine.click();
    await wb.palette('Hydra: Take This Change');
    const takeAsk = await wb.dialog();
    check(/Take breaker's change at lines? [0-9-]+ into lib\.sh\?/.test(takeAsk.text) && takeAsk.buttons.includes("Take breaker's change"),
      `Take This Change in Compare All Changes names whose change it takes first: ${takeAsk.text}`);
    await wb.shot('take-in-all-changes');
    await takeAsk.press('Cancel');
    check(fs.readFileSync(path.join(repo, 'lib.sh'), 'utf8') === libBefore, 'Cancel took nothing into lib.sh');

    // The inline buttons of each row.
    await wb.inline(raceRow, 'Show Scoreboard');
    const board = await wb.waitActiveTab(new RegExp(`Hydra scoreboard ${raceId}`), 'the scoreboard tab');
    check(true, `the race's inline Show Scoreboard brings its scoreboard forward: ${board}`);
    await wb.inline(agentRow, 'Show Diff');
    await wb.pick('CHANGELOG.md');
    const changelogTab = await wb.waitActiveTab(/CHANGELOG\.md \(base ↔ fixer\)/, 'the CHANGELOG.md diff');
    check(true, `the agent's inline Show Diff asks for the file and opens its diff: ${changelogTab}`);
    await wb.inline(fileRow, 'Show Diff');
    const libTab = await wb.waitActiveTab(/lib\.sh \(base ↔ fixer\)/, 'the lib.sh diff');
    check(true, `the file's inline Show Diff opens its diff: ${libTab}`);
    await wb.inline(breakerRow, 'Show Agent Output');
    await waitFor(async () => /break: rewriting lib\.sh from scratch/.test(await outputText()), 30000, 'the breaker output channel');
    check(true, "the agent's inline Show Agent Output shows its channel");
    await wb.shot('inline-buttons');
    // Compare Agents from an agent's context menu: that agent, then the only other one, then a file; the
    // better ranked (the fixer, the winner) on the left, whichever was picked first.
    await wb.contextMenu(breakerRow, 'Compare Agents');
    await wb.pick('lib.sh');
    const ranked = await wb.waitActiveTab(/lib\.sh \(fixer ↔ breaker\)/, 'the comparison from the context menu');
    const sides = await wb.waitProbe((p) => p.activeTab?.kind === 'diff' && /fixer ↔ breaker/.test(p.activeTab.label) && p.activeTab, 'its sides');
    check(hydraSide(sides.original).agent === 'fixer' && hydraSide(sides.modified).agent === 'breaker',
      `an agent's context menu compares it with the other, by rank: ${ranked}`);

    // Merging the agent that lost: the dialog says why it is not a safe
    // pick, and its primary button (where Enter lands) does not merge.
    const headBeforeBreaker = git(repo, 'rev-parse', 'HEAD');
    await wb.inline(breakerRow, 'Merge Agent');
    const warning = await wb.dialog();
    await wb.shot('merge-loser');
    const breakerTotal = scores.rankings.find((r) => r.agentId === 'breaker').total.toFixed(1);
    check(warning.severity === 'warning' && /breaker is not a safe pick/.test(warning.text) &&
      warning.text.includes(`It ranked #2 of 2 (${breakerTotal} / 100`) && /Its build failed \(exit 2\)/.test(warning.text) &&
      /Its tests did not run \(skipped: the build failed\)/.test(warning.text),
    `merging the last-ranked agent is a warning with its rank, score and why: ${warning.text}`);
    check(warning.buttons.includes('Merge Anyway') && warning.buttons.includes('Cancel') && !warning.buttons.includes('Merge') &&
      warning.primary.length === 1 && warning.primary[0] === 'Show Scoreboard',
    `its merge button says "Merge Anyway", and is not where Enter lands (buttons: ${warning.buttons.join(', ')}; primary: ${warning.primary.join(', ')})`);
    await warning.press('Cancel');
    check(git(repo, 'rev-parse', 'HEAD') === headBeforeBreaker, 'Cancel merged nothing');

    // Merge the winner from the race's inline button: the dry run in a modal confirmation, then the merge.
    const headBefore = git(repo, 'rev-parse', 'HEAD');
    await wb.inline(raceRow, 'Merge Winner');
    const dialog = await wb.dialog();
    check(dialog.severity === 'info' && /Merge fixer, the winner, into main\?/.test(dialog.text) && /Fast-forward main/.test(dialog.text) &&
      /lib\.sh/.test(dialog.text) && !/not a safe pick/.test(dialog.text) && dialog.primary.join() === 'Merge' && !dialog.buttons.includes('Merge Anyway'),
    `the winner's dialog is a plain question, not the warning, with the dry run and a "Merge" button: ${dialog.text} (${dialog.severity})`);
    check(git(repo, 'rev-parse', 'HEAD') === headBefore, 'the dry run changed nothing');
    await wb.shot('merge-confirm');
    await dialog.press('Merge');
    const merged = await wb.toast('merged fixer into main');
    await wb.shot('merged');
    const headAfter = git(repo, 'rev-parse', 'HEAD');
    const lib = fs.readFileSync(path.join(repo, 'lib.sh'), 'utf8');
    check(headAfter !== headBefore && /\$1 \+ \$2/.test(lib) && fs.existsSync(path.join(repo, 'CHANGELOG.md')),
      `merging changed the repository (${merged}; HEAD ${headBefore.slice(0, 8)} -> ${headAfter.slice(0, 8)})`);
    check(git(repo, 'status', '--porcelain') === '', 'the working tree is clean after the merge');

    // The race is merged: the view says so on the race and on the agent merged, and offers no merge any more.
    sidebar = await wb.hydraView();
    const mergedLabel = await waitFor(async () => {
      const t = (await raceRow.innerText()).replace(/\n/g, ' ');
      return /merged fixer into main/.test(t) ? t : undefined;
    }, 20000, 'the race row to say it was merged');
    await raceRow.hover();
    await raceRow.locator('.actions .action-label[aria-label="Show Scoreboard"]').first().waitFor({ state: 'visible', timeout: 10000 });
    const mergedRaceActions = await raceRow.locator('.actions .action-label').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
    check(await raceRow.locator('.codicon-git-merge').count() === 1 && !mergedRaceActions.includes('Merge Winner'),
      `the view marks the race merged, with no Merge Winner: ${mergedLabel} [${mergedRaceActions.join(', ')}]`);
    // The race's row now names the fixer too: the agents' rows are those one level down.
    const fixerRow = sidebar.locator('.monaco-list-row[aria-level="2"]', { hasText: 'fixer' }).first();
    const loserRow = sidebar.locator('.monaco-list-row[aria-level="2"]', { hasText: 'breaker' }).first();
    const fixerLabel = await waitFor(async () => {
      const t = (await fixerRow.innerText()).replace(/\n/g, ' ');
      return /merged into main/.test(t) ? t : undefined;
    }, 20000, 'the fixer row to say it was merged');
    await fixerRow.hover();
    await fixerRow.locator('.actions .action-label[aria-label="Show Diff"]').first().waitFor({ state: 'visible', timeout: 10000 });
    const fixerActions = await fixerRow.locator('.actions .action-label').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
    await loserRow.hover();
    await loserRow.locator('.actions .action-label[aria-label="Show Diff"]').first().waitFor({ state: 'visible', timeout: 10000 });
    const breakerActions = await loserRow.locator('.actions .action-label').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
    check(await fixerRow.locator('.codicon-git-merge').count() === 1 && !fixerActions.includes('Merge Agent') && !breakerActions.includes('Merge Agent'),
      `the view marks the agent merged, and no agent of the race offers Merge Agent: ${fixerLabel} [${fixerActions.join(', ')}]`);
    await wb.shot('merged-view');
    // The scoreboard, drawn again when the race was merged: brought forward, not reloaded.
    await page.locator('.tabs-container .tab', { hasText: `Hydra scoreboard ${raceId}` }).first().click();
    const mergedBoard = await waitFor(() => scoreboardSaying(page, /Merged fixer into main/), 20000, 'the scoreboard to say the race was merged');
    const mergedSummary = await mergedBoard.locator('p.summary').innerText();
    const mergeButtons = await mergedBoard.locator('button.merge').count();
    const mergedBadge = await mergedBoard.locator('section.card[data-agent="fixer"] .merged-badge').innerText();
    check(/^Merged fixer into main \(fast-forward, at [0-9a-f]{8}\)$/.test(mergedSummary.trim()) && !/eligible to merge/.test(mergedSummary) &&
      mergeButtons === 0 && mergedBadge === 'merged into main',
    `the scoreboard says "${mergedSummary.trim()}" instead of what could be merged, marks the fixer "${mergedBadge}", and has ${mergeButtons} Merge buttons`);
    await wb.shot('merged-scoreboard');
    // Merge Winner offers no merged race: none is left, and it says so.
    await wb.palette('Hydra: Merge Winner');
    const noneLeft = await wb.toast('no race has a winner left to merge');
    check(!(await page.locator('.quick-input-widget').isVisible()), `Merge Winner offers no merged race, and says none is left: ${noneLeft}`);
    await wb.palette('Notifications: Clear All Notifications');
    // Merging removed the race's worktrees, and the findings on them went with them.
    const gone = await wb.waitProbe((p) => !Object.keys(p.diagnostics).some((f) => f.startsWith(breakerTree)),
      'the findings on the merged race to go').catch(() => false);
    check(gone && !fs.existsSync(breakerTree), 'the findings on the merged race\'s worktrees are cleared');

    // A race where every agent fails is said so. It starts from the view's title button.
    await wb.viewTitleAction('Start Race');
    const lost = await startFromTaskBox(wb, 'A race nobody wins', async () => {
      await page.locator('.quick-input-list .monaco-list-row', { hasText: 'fixer' }).first().click();
    });
    const failedToast = await wb.toast('All agents failed: no winner', 90000);
    check(failedToast.includes(lost.raceId) && /breaker/.test(failedToast), `a race every agent failed says so: ${failedToast}`);
    // Its scoreboard opens too; the next race starts once it has.
    await wb.waitActiveTab(new RegExp(`Hydra scoreboard ${lost.raceId}`), "the lost race's scoreboard");
    await wb.shot('all-failed');

    // A race of sleeper and dozer: dozer cancelled from its row's inline
    // Cancel Agent (sleeper runs on), then the race from its progress
    // notification's Cancel.
    const sleepers = async () => {
      for (const name of ['fixer', 'breaker', 'sleeper', 'dozer']) {
        await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().click();
      }
    };
    await wb.palette('Hydra: Start Race');
    const { raceId: second } = await startFromTaskBox(wb, 'A race to cancel', sleepers);
    // Its message moves on as agents end ("dozer finished (cancelled)"): the title stays.
    await page.locator('.notification-toast', { hasText: 'A race to cancel' }).first().waitFor({ timeout: 20000 });
    sidebar = await wb.hydraView();
    const dozerRow = sidebar.locator('.monaco-list-row[aria-level="2"]', { hasText: 'dozer' }).first();
    await waitFor(async () => /running/.test(await dozerRow.innerText()), 20000, 'dozer to run');
    await wb.inline(dozerRow, 'Cancel Agent');
    const oneCancelled = await waitFor(async () => {
      const { races: [r] } = await rpc.request('hydra/status', { raceId: second });
      return r.agents.find((a) => a.agentId === 'dozer').state === 'cancelled' ? r : undefined;
    }, 30000, 'dozer to be cancelled');
    check(oneCancelled.state === 'running' && oneCancelled.agents.find((a) => a.agentId === 'sleeper').state === 'running',
      `an agent's inline Cancel Agent cancels that agent, and the race runs on: ${
        oneCancelled.agents.map((a) => `${a.agentId} ${a.state}`).join(', ')} (race ${oneCancelled.state})`);
    await wb.clickNotificationButton('Racing 2 agents', 'Cancel');
    const cancelled = await waitFor(async () => {
      const { races } = await rpc.request('hydra/status', { raceId: second });
      return races[0].state === 'cancelled' ? races[0] : undefined;
    }, 30000, 'the race to be cancelled');
    check(cancelled.agents.every((a) => a.state === 'cancelled'),
      `Cancel on the progress notification cancels the race: ${cancelled.agents.map((a) => `${a.agentId} ${a.state}`).join(', ')}`);
    await waitFor(async () => (await page.locator('.part.sidebar .monaco-list-row', { hasText: 'A race to cancel' }).first().innerText()).includes('cancelled'),
      10000, 'the view to show the cancelled race');
    await wb.shot('cancelled');

    // Another, cancelled from its row's inline Cancel Race.
    await wb.palette('Hydra: Start Race');
    const { raceId: third } = await startFromTaskBox(wb, 'Another race to cancel', sleepers);
    sidebar = await wb.hydraView();
    const thirdRow = sidebar.locator('.monaco-list-row[aria-level="1"]', { hasText: 'Another race to cancel' }).first();
    await wb.inline(thirdRow, 'Cancel Race');
    const thirdCancelled = await waitFor(async () => {
      const { races } = await rpc.request('hydra/status', { raceId: third });
      return races[0].state === 'cancelled' ? races[0] : undefined;
    }, 30000, 'the race to be cancelled from its row');
    check(thirdCancelled.agents.every((a) => a.state === 'cancelled'),
      `a race's inline Cancel Race cancels it: ${thirdCancelled.agents.map((a) => `${a.agentId} ${a.state}`).join(', ')}`);

    // Show Race History, from the view's title: every race, then what to do with the one picked.
    await wb.viewTitleAction('Show Race History');
    await wb.pick(raceId);
    await wb.pick('Show Scoreboard');
    const historyBoard = await wb.waitActiveTab(new RegExp(`Hydra scoreboard ${raceId}`), "the first race's scoreboard");
    check(true, `the view's Show Race History opens a past race's scoreboard: ${historyBoard}`);
    await wb.shot('history');

    // Clean Up Race, from a race's context menu: that race's worktrees and branches go, no other's.
    const worktreesOf = async (id) => (await rpc.request('hydra/status', { raceId: id })).races[0].agents.map((a) => a.worktree);
    const lostTrees = await worktreesOf(lost.raceId);
    const otherTrees = [...await worktreesOf(second), ...await worktreesOf(third)];
    sidebar = await wb.hydraView();
    const lostRow = sidebar.locator('.monaco-list-row[aria-level="1"]', { hasText: 'A race nobody wins' }).first();
    await wb.contextMenu(lostRow, 'Clean Up Race');
    const cleanOne = await wb.dialog();
    check(cleanOne.text.includes(`race ${lost.raceId}`), `Clean Up Race asks first: ${cleanOne.text}`);
    await cleanOne.press('Remove');
    await wb.toast('worktree(s)');
    check(lostTrees.length > 0 && lostTrees.every((t) => !fs.existsSync(t)) && otherTrees.every((t) => fs.existsSync(t)) &&
      !git(repo, 'branch', '--list', 'hydra/*').includes(lost.raceId),
    `Clean Up Race removes that race's worktrees and branches (${lostTrees.length}), and only its`);

    // Clean Up, from the view's title: every finished race's worktrees and branches go.
    const workspaces = path.join(repo, '.hydra-workspaces');
    const before = fs.existsSync(workspaces) ? fs.readdirSync(workspaces).length : 0;
    await wb.viewTitleAction('Clean Up');
    const cleanup = await wb.dialog();
    check(/every finished race/.test(cleanup.text), `Clean Up asks first: ${cleanup.text}`);
    await cleanup.press('Remove');
    const removed = await wb.toast(`removed ${before} worktree(s)`);
    const left_ = fs.existsSync(workspaces) ? fs.readdirSync(workspaces).length : 0;
    check(before > 0 && left_ === 0 && git(repo, 'branch', '--list', 'hydra/*') === '',
      `Clean Up removes the worktrees (${before} -> ${left_}) and branches: ${removed}`);
    await wb.shot('cleaned-up');
    // Merge Winner still has none to offer: not the merged race, not the one nobody won, not the cancelled ones (no winner).
    await wb.palette('Hydra: Merge Winner');
    const stillNone = await wb.toast('no race has a winner left to merge');
    check(!(await page.locator('.quick-input-widget').isVisible()),
      `with a merged race, one nobody won and two cancelled, Merge Winner offers none: ${stillNone}`);

    // A broken hydra.toml reaches the user once, in hydra's words, with a button that opens the file there.
    const toml = path.join(repo, 'hydra.toml');
    const goodToml = fs.readFileSync(toml, 'utf8');
    fs.writeFileSync(toml, '[general]\nmax_concurent_agents = 4\n');
    const brokenRace = async () => {
      // hydra reads hydra.toml again every two seconds and publishes its problem: Start Race then asks for no task.
      await wb.waitProbe((p) => p.diagnostics[toml]?.some((d) => d.severity === 0), "hydra.toml's problem published", 20000);
      await wb.palette('Hydra: Start Race');
      const error = await wb.toast('hydra.toml is broken');
      const asked = await page.locator('.quick-input-widget input').isVisible();
      // Anything hydra answers later comes after that error was handled.
      await wb.palette('Hydra: Show Race History');
      await page.locator('.quick-input-list .monaco-list-row', { hasText: raceId }).first().waitFor({ timeout: 20000 });
      await page.keyboard.press('Escape');
      return { error, asked, toasts: await wb.toastCount('hydra.toml is broken') };
    };
    const broken = await brokenRace();
    check(/hydra\.toml:2:1: unknown key 'max_concurent_agents'/.test(broken.error) && !broken.asked,
      `with hydra.toml broken, Start Race says so at once, with hydra's words and place, and asks for no task: ${broken.error}`);
    check(broken.toasts === 1, `one broken hydra.toml, one error toast (${broken.toasts})`);
    await wb.shot('server-error');
    // It is a diagnostic on hydra.toml too, at the line hydra names (2, so 1 counted from 0), over the whole key.
    const tomlProblems = await wb.waitProbe((p) => p.diagnostics[toml], "hydra.toml's problem as a diagnostic").catch(() => []);
    check(tomlProblems.length === 1 && tomlProblems[0].line === 1 && tomlProblems[0].severity === 0 && tomlProblems[0].source === 'hydra' &&
      tomlProblems[0].character === 0 && tomlProblems[0].endLine === 1 && tomlProblems[0].endCharacter === 'max_concurent_agents'.length &&
      /races cannot start until it is fixed/.test(tomlProblems[0].message),
    `hydra.toml's problem is an error on its line 2, over the key: ${JSON.stringify(tomlProblems)}`);
    await wb.clickNotificationButton('hydra.toml is broken', 'Open hydra.toml');
    await wb.waitActiveTab(/^hydra\.toml/, 'hydra.toml opened by the notification\'s button');
    const squiggle = page.locator('.editor-group-container.active .monaco-editor .squiggly-error').first();
    await squiggle.waitFor({ timeout: 20000 });
    check(true, 'Open hydra.toml opens the file, the problem squiggled');
    await wb.shot('toml-diagnostic');
    // The user closes it and tries again: hydra does not say it twice, the extension does, once.
    await wb.palette('Notifications: Clear All Notifications');
    await waitFor(async () => (await wb.toastCount('hydra.toml is broken')) === 0, 10000, 'the notification to close');
    const again = await brokenRace();
    check(again.toasts === 1, `once closed, the next race refused for it says so again, once (${again.toasts})`);
    // Fixed, with nothing asked of hydra: it re-reads the file by itself, and its empty list clears the diagnostic.
    fs.writeFileSync(toml, goodToml);
    const cleared = await wb.waitProbe((p) => !p.diagnostics[toml], "hydra.toml's diagnostic to clear", 15000).catch(() => false);
    await page.locator('.editor-group-container.active .monaco-editor .squiggly-error').first().waitFor({ state: 'detached', timeout: 10000 })
      .catch(() => undefined);
    const squiggles = await page.locator('.editor-group-container.active .monaco-editor .squiggly-error').count();
    check(cleared && squiggles === 0, `fixed, hydra.toml's diagnostic clears without a request (${squiggles} squiggles left)`);
    await wb.shot('toml-fixed');
  } catch (e) {
    await scenarioFailed(wb, 'race', e);
  } finally {
    await rpc?.close().catch(() => undefined);
    await wb?.close();
  }
  return run;
}

/** Races `agents` on `task` through `rpc` (another hydra serve) and waits for the end; answers the race id. */
async function raceThrough(rpc, task, agents) {
  const { raceId } = await rpc.request('hydra/race', { task, agents });
  await waitFor(() => rpc.notifications.some((n) => n.method === 'hydra/raceFinished' && n.params.raceId === raceId),
    90000, `race ${raceId} to finish`);
  return raceId;
}

async function historyScenario() {
  const run = runFolder('history');
  const repo = makeRepo(path.join(run, 'calc'));
  let wb;
  try {
    // Two races before VS Code opens: it sees them only as hydra recorded them.
    const rpc = new HydraRpc(hydra, repo);
    await rpc.initialize();
    const raced = await raceThrough(rpc, 'Make add() add, narrated', ['narrator', 'crasher']);
    const crashed = await raceThrough(rpc, 'A race that crashes', ['crasher']);
    const polished = await raceThrough(rpc, 'Polish lib.sh', ['polisher']);
    const scores = await rpc.request('hydra/scores', { raceId: raced });
    const lostScores = await rpc.request('hydra/scores', { raceId: crashed });
    const { races: [summary] } = await rpc.request('hydra/status', { raceId: raced });
    await rpc.close();
    const crasher = scores.rankings.find((r) => r.agentId === 'crasher');
    const crasherError = summary.agents.find((a) => a.agentId === 'crasher').error;
    check(scores.winner === 'narrator' && crasher?.rank === 2 && crasher.eligible === false && crasher.ineligible === 'failed' &&
      /quota exceeded/.test(crasherError ?? ''),
    `hydra ranks the agent that failed after the winner, unable to win: ${crasher?.agentId} #${crasher?.rank} ${crasher?.ineligible}; ${crasherError}`);
    check(lostScores.allFailed && lostScores.winner === null, 'hydra gives the race where the only agent failed no winner');

    wb = await Workbench.open({
      run, folder: repo, settings: { 'hydra.serverPath': hydra }, vsix, port: await port(1), trust: true, prefix: 'history',
    });
    const page = wb.page;
    await page.locator('.activitybar [aria-label^="Hydra"]').first().waitFor({ timeout: 30000 });
    const outputText = () => page.locator('.part.panel .view-lines')
      .evaluateAll((els) => els.map((e) => e.innerText).join('\n')).then(plain);

    // The narrator's output: a transcript of the events hydra stored, not its JSON.
    await wb.palette('Hydra: Show Agent Output');
    await wb.pick(raced);
    await wb.pick('narrator');
    // The whole transcript on screen: the editor renders only the lines in view.
    await wb.palette('View: Toggle Maximized Panel');
    await waitFor(async () => /\[hydra: narrator completed/.test(await outputText()), 30000, "the narrator's transcript");
    const transcript = await outputText();
    const expected = [
      "add() subtracts: I'll make it add.",
      '> Edit: lib.sh',
      '< Edit: The file lib.sh has been updated.',
      '[update] lib.sh',
      '> Bash: make test',
      "< Bash [error]: make: *** No rule to make target 'test'. Stop.",
      'Fixed: add() adds its arguments.',
      '[summary] done, 4 turn(s), tokens: 1200 in, 150 out, 300 cached, $0.0123',
      '[warning] permission denied: Write /etc/hosts',
      '[hydra: narrator completed, exit code 0]',
    ];
    const missing = expected.filter((line) => !transcript.includes(line));
    check(missing.length === 0 && !/"type":/.test(transcript),
      `an agent of a race this window never watched shows as a transcript from hydra/agentEvents${
        missing.length ? `; missing: ${missing.join(' | ')}` : ''}`);
    await wb.shot('transcript');

    // Its raw log, on demand: the stream as the CLI printed it.
    await wb.palette('Hydra: Show Agent Raw Log');
    await wb.pick(raced);
    await wb.pick('narrator');
    await waitFor(async () => /"type":"result"/.test(await outputText()), 30000, "the narrator's raw log");
    check(/"type":"assistant"/.test(await outputText()), 'Show Agent Raw Log shows the stream as printed');
    await wb.shot('raw-log');
    await wb.palette('View: Toggle Maximized Panel');

    // An agent whose adapter reads nothing (a plain command): its log, then how it ended, with its error.
    await wb.palette('Hydra: Show Agent Output');
    await wb.pick(raced);
    await wb.pick('crasher');
    await waitFor(async () => /\[hydra: crasher failed/.test(await outputText()), 30000, "the crasher's output");
    const crashText = await outputText();
    check(/crash: rewriting lib\.sh/.test(crashText) && /\[hydra: crasher failed, exit code 3: .*quota exceeded\]/.test(crashText),
      `a plain command's output is its log, and ends with its error: ${crashText.split('\n').filter((l) => /crasher failed/.test(l)).join('')}`);

    // The scoreboard: the agent that failed is marked, shows its error, and offers no merge.
    await wb.palette('Hydra: Show Scoreboard');
    await wb.pick(raced);
    const frame = await waitFor(() => scoreboardFrame(page), 30000, 'the scoreboard');
    const crasherCard = frame.locator('section.card[data-agent="crasher"]');
    await crasherCard.waitFor({ timeout: 10000 });
    const mark = await crasherCard.locator('.cannot-win').innerText();
    const shownError = await crasherCard.locator('.error').innerText();
    check(mark === 'failed: cannot win' && /quota exceeded/.test(shownError) && await crasherCard.locator('button.merge').count() === 0 &&
      await frame.locator('section.card[data-agent="narrator"] button.merge').count() === 1,
    `the scoreboard marks the failed agent (${mark}), shows its error (${shownError}) and offers no Merge for it`);
    await wb.shot('scoreboard-ineligible');

    // The view: the race nobody won says so; the agent that failed is marked and has no Merge button.
    const sidebar = await wb.hydraView();
    const lostRow = sidebar.locator('.monaco-list-row', { hasText: 'A race that crashes' }).first();
    await lostRow.waitFor({ timeout: 20000 });
    const lostLabel = (await lostRow.innerText()).replace(/\n/g, ' ');
    await lostRow.hover();
    await lostRow.locator('.actions .action-label[aria-label="Show Scoreboard"]').first().waitFor({ state: 'visible', timeout: 10000 });
    const lostActions = await lostRow.locator('.actions .action-label').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
    check(/All agents failed: no winner/.test(lostLabel) && !lostActions.includes('Merge Winner'),
      `a race every agent failed says so in the view, with no Merge Winner: ${lostLabel} [${lostActions.join(', ')}]`);
    const racedRow = sidebar.locator('.monaco-list-row', { hasText: 'Make add() add, narrated' }).first();
    if ((await racedRow.getAttribute('aria-expanded')) !== 'true') await racedRow.click();
    const crasherRow = sidebar.locator('.monaco-list-row[aria-level="2"]', { hasText: 'crasher' }).first();
    const crasherLabel = await waitFor(async () => {
      const t = (await crasherRow.innerText()).replace(/\n/g, ' ');
      return /cannot win/.test(t) ? t : undefined;
    }, 20000, 'the crasher row to be marked');
    await crasherRow.hover();
    await crasherRow.locator('.actions .action-label[aria-label="Show Diff"]').first().waitFor({ state: 'visible', timeout: 10000 });
    const crasherActions = await crasherRow.locator('.actions .action-label').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
    check(/failed: cannot win/.test(crasherLabel) && !crasherActions.includes('Merge Agent') && crasherActions.includes('Show Diff'),
      `the view marks the agent that failed and offers no Merge Agent for it: ${crasherLabel} [${crasherActions.join(', ')}]`);
    await wb.shot('view-ineligible');

    // Merge Agent from the palette offers only the agent that can win.
    await wb.palette('Hydra: Merge Agent');
    await wb.pick(raced);
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: 20000 });
    const asked = (await dialog.innerText()).replace(/\n+/g, ' | ');
    await dialog.locator('.monaco-button', { hasText: /^Cancel$/ }).click();
    await dialog.waitFor({ state: 'hidden', timeout: 10000 });
    // The narrator's claude stream reports a denied tool call: it may win, but is asked about with a warning.
    check(/narrator is not a safe pick/.test(asked) && /1 tool call denied/.test(asked),
      `Merge Agent goes straight to the only agent that can win, and says why it is not merged by itself: ${asked}`);

    // Merge Winner does not offer the race nobody won.
    await wb.palette('Hydra: Merge Winner');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: raced }).first().waitFor({ timeout: 20000 });
    const offered = await page.locator('.quick-input-list .monaco-list-row').allInnerTexts();
    await page.keyboard.press('Escape');
    check(!offered.some((t) => t.includes(crashed)), `Merge Winner does not offer the race every agent failed (${offered.length} offered)`);

    // Its scoreboard says it has no winner.
    await wb.palette('Hydra: Show Scoreboard');
    await wb.pick(crashed);
    const lostFrame = await waitFor(async () => {
      const f = await scoreboardFrame(page);
      return f && await f.locator('p.summary').count() > 0 && /crashes|no winner/.test(await f.locator('p.summary').innerText()) ? f : undefined;
    }, 30000, 'the scoreboard of the race nobody won');
    const lostSummary = await lostFrame.locator('p.summary').innerText();
    check(/^All agents failed: no winner \(none finished with a change that could be merged\)\.$/.test(lostSummary.trim()),
      `the scoreboard of a race every agent failed says so: ${lostSummary}`);
    await wb.shot('scoreboard-all-failed');

    // Merged meanwhile from elsewhere (the terminal, another window), where the user confirmed the
    // flagged winner (force): the view still offers its merge; hydra refuses it as alreadyMerged,
    // in its own words, and the race shows as merged.
    const elsewhere = new HydraRpc(hydra, repo);
    await elsewhere.initialize();
    await elsewhere.request('hydra/merge', { raceId: raced, agentId: 'narrator', force: true });
    await elsewhere.close();
    const mergedLib = fs.readFileSync(path.join(repo, 'lib.sh'), 'utf8');
    const mergedRow = (await wb.hydraView()).locator('.monaco-list-row[aria-level="1"]', { hasText: 'Make add() add, narrated' }).first();
    await wb.inline(mergedRow, 'Merge Winner');
    const refused = await wb.toast('was merged already');
    check(refused.includes(raced) && /narrator into main/.test(refused) && await wb.toastCount('was merged already') === 1 &&
      !(await page.locator('.monaco-dialog-box').isVisible()),
    `a race merged elsewhere is refused with hydra's message, once, and nothing is asked: ${refused}`);
    const nowMerged = await waitFor(async () => {
      const t = (await mergedRow.innerText()).replace(/\n/g, ' ');
      return /merged narrator into main/.test(t) ? t : undefined;
    }, 20000, 'the race to show as merged');
    check(true, `the refusal reloads the race, which shows as merged: ${nowMerged}`);
    await wb.shot('merged-elsewhere');

    // Take one change of two: the polisher changed lib.sh's first line and added half() at its end.
    // The cursor on half() in its diff, Take This Change (the diff's title button) puts just that into the working tree.
    await wb.palette('Hydra: Show Diff');
    await wb.pick(polished);
    await wb.waitActiveTab(/lib\.sh \(base ↔ polisher\)/, "the polisher's diff");
    const polishDiff = page.locator('.editor-group-container.active .monaco-diff-editor').first();
    const halfLine = polishDiff.locator('.editor.modified .view-line', { hasText: 'half() {' }).first();
    await halfLine.waitFor({ timeout: 20000 });
    await halfLine.click();
    const takeButton = page.locator('.editor-group-container.active .action-label[aria-label*="Take This Change"]').first();
    await takeButton.click();
    const took = await wb.toast("took polisher's change");
    const afterTake = fs.readFileSync(path.join(repo, 'lib.sh'), 'utf8');
    // Lines 10-13 of its version, where the diff editor shows the added function.
    check(afterTake === `${mergedLib}\nhalf() {\n  echo $(( $1 / 2 ))\n}\n` && afterTake.startsWith('# Arithmetic helpers.\n') &&
      /change at lines 10-13 into lib\.sh/.test(took),
      `taking the change under the cursor leaves exactly it in lib.sh on disk, not the polisher's other change (${took}):\n${afterTake}`);
    check(/M lib\.sh/.test(git(repo, 'status', '--porcelain')), 'lib.sh is changed in the working tree, not committed');
    await wb.shot('took-change');
    // Again: it is there already, and nothing changes.
    await takeButton.click();
    const already = await wb.toast('already');
    check(fs.readFileSync(path.join(repo, 'lib.sh'), 'utf8') === afterTake, `taking it again changes nothing: ${already}`);
  } catch (e) {
    await scenarioFailed(wb, 'history', e);
  } finally {
    await wb?.close();
  }
  return run;
}

/**
 * The agents a race names, as hydra refuses them: one whose binary went
 * away after the pick listed it, then one renamed in hydra.toml meanwhile.
 * hydra.toml turns auto_merge on, so that the race finally raced merges its
 * winner by itself.
 */
async function agentsScenario() {
  const run = runFolder('agents');
  // vanisher's binary is a copy of the scripted agent that the test deletes while the pick is open.
  const vanisher = path.join(run, 'vanisher.sh');
  fs.copyFileSync(path.join(path.dirname(new URL(import.meta.url).pathname), 'fixtures', 'agent.sh'), vanisher);
  fs.chmodSync(vanisher, 0o755);
  const repo = makeRepo(path.join(run, 'calc'), { extraAgents: [{ name: 'vanisher', mode: 'fix', binary: vanisher }], autoMerge: true });
  // 'ghost' names no agent at all.
  const settings = { 'hydra.serverPath': hydra, 'hydra.defaultAgents': ['fixer', 'breaker', 'ghost'] };
  let wb;
  let rpc;
  try {
    wb = await Workbench.open({ run, folder: repo, settings, vsix, port: await port(2), trust: true, prefix: 'agents' });
    const page = wb.page;
    await page.locator('.activitybar [aria-label^="Hydra"]').first().waitFor({ timeout: 30000 });
    rpc = new HydraRpc(hydra, repo);
    await rpc.initialize();
    const title = () => page.locator('.quick-input-title').innerText();

    // An agent that goes away between the pick and the race: hydra refuses it, and says why.
    await wb.viewTitleAction('Start Race');
    const task = 'Make add() add, whoever is left';
    await page.locator('.quick-input-widget input').waitFor({ state: 'visible' });
    await page.keyboard.type(task);
    await page.keyboard.press('Enter');
    const vanisherRow = page.locator('.quick-input-list .monaco-list-row', { hasText: 'vanisher' }).first();
    await vanisherRow.waitFor({ timeout: 30000 });
    const defaultsNote = await title();
    check(/hydra\.defaultAgents names 'ghost', an agent hydra does not know/.test(defaultsNote),
      `the pick says a default agent hydra does not know was left out: ${defaultsNote}`);
    await vanisherRow.click();
    check(await checkedRows(page).count() === 3, 'vanisher, available when the pick opened, is ticked with the defaults');
    fs.rmSync(vanisher);
    await page.keyboard.press('Enter');
    const gone = page.locator('.notification-toast', { hasText: "'vanisher' cannot run here" }).first();
    await gone.waitFor({ timeout: 30000 });
    const goneText = (await gone.locator('.notification-list-item-message').innerText()).trim();
    const goneButtons = (await gone.locator('.monaco-button').allInnerTexts()).map((t) => t.trim());
    await page.waitForTimeout(400); // the toast slides in: let it settle for the screenshot
    await wb.shot('agent-unavailable');
    check(goneText.includes(vanisher) && goneButtons.includes('Pick Agents Again'),
      `AgentUnavailable says which agent and why (data.problem), with a way back to the pick: ${goneText} [${goneButtons.join(', ')}]`);
    check(!fs.existsSync(path.join(repo, '.hydra-workspaces')) || fs.readdirSync(path.join(repo, '.hydra-workspaces')).length === 0,
      'nothing started');

    // Pick Agents Again: the same task, the agents as they are now; vanisher is listed apart, with hydra's reason.
    await gone.locator('.monaco-button', { hasText: 'Pick Agents Again' }).click();
    await waitFor(async () => /vanisher/.test(await title()), 20000, 'the pick to open again');
    const againTitle = await title();
    const rows = await agentRows(page);
    const vanished = rows.find((r) => r.name.includes('vanisher'));
    const ticked = await checkedRows(page).count();
    await wb.shot('pick-again');
    check(vanished?.unavailable && vanished.detail.includes(vanisher) && ticked === 2 &&
      rows.findIndex((r) => r.unavailable) > rows.findIndex((r) => r.name === 'fixer'),
    `the pick opens again for the same task, vanisher under "not available" with its problem (${vanished?.detail}), the others still ticked (${ticked}): ${againTitle}`);

    // An agent renamed in hydra.toml while the pick is open: hydra does not know it, and suggests the new name.
    const toml = path.join(repo, 'hydra.toml');
    fs.writeFileSync(toml, fs.readFileSync(toml, 'utf8').replace('[agents.breaker]', '[agents.breakr]'));
    await page.keyboard.press('Enter');
    const unknown = page.locator('.notification-toast', { hasText: "unknown agent 'breaker'" }).first();
    await unknown.waitFor({ timeout: 30000 });
    const unknownText = (await unknown.locator('.notification-list-item-message').innerText()).trim();
    const unknownButtons = (await unknown.locator('.monaco-button').allInnerTexts()).map((t) => t.trim());
    await page.waitForTimeout(400);
    await wb.shot('unknown-agent');
    check(/did you mean 'breakr'\?/.test(unknownText) && (unknownText.match(/\bknown\b/g) ?? []).length === 1 &&
      unknownButtons.includes('Race with breakr') && unknownButtons.includes('Pick Agents Again'),
    `UnknownAgentName shows hydra's suggestion (data.suggestion), the known agents once, and offers to race with it: ${
      unknownText} [${unknownButtons.join(', ')}]`);

    // Race with breakr: the same task, breakr instead of breaker.
    const headBefore = git(repo, 'rev-parse', 'HEAD');
    await unknown.locator('.monaco-button', { hasText: 'Race with breakr' }).click();
    const started = await waitFor(async () => {
      const t = await page.locator('.statusbar-item', { hasText: 'started with' }).allInnerTexts();
      return t.find((x) => RACE_ID.test(x));
    }, 30000, 'the race with breakr to start');
    const raceId = RACE_ID.exec(started)[1];
    const racedWith = /started with (.*)$/.exec(started.trim())[1].split(', ').sort().join();
    check(racedWith === 'breakr,fixer', `Race with breakr races the same agents, breakr for breaker: ${started.trim()}`);
    const { races: [raced] } = await rpc.request('hydra/status', { raceId });
    check(raced.task === task, `for the same task: ${raced.task}`);

    // auto_merge is on: hydra merges the winner by itself, and the extension says so.
    // Its notice may be a toast still, or already in the notification centre: the race ends in a moment
    // and the scoreboard and other notices follow it.
    const merged = await wb.notification('auto_merge merged fixer', 90000);
    const headAfter = git(repo, 'rev-parse', 'HEAD');
    // A hydra that does not name the branch (targetBranch) gets "your branch".
    check(merged.includes(raceId) && /into (main|your branch)/.test(merged) && headAfter !== headBefore &&
      /\$1 \+ \$2/.test(fs.readFileSync(path.join(repo, 'lib.sh'), 'utf8')),
    `what auto_merge did is said: ${merged} (HEAD ${headBefore.slice(0, 8)} -> ${headAfter.slice(0, 8)})`);
    // The scoreboard says what auto_merge merged, and offers nothing more to merge.
    const frame = await waitFor(() => scoreboardSaying(page, /Merged fixer/), 30000, 'the scoreboard');
    const summary = await frame.locator('p.summary').innerText();
    const { races: [record] } = await rpc.request('hydra/status', { raceId });
    check(/^Merged fixer into main \(fast-forward, at [0-9a-f]{8}, by auto_merge\)$/.test(summary.trim()) &&
      await frame.locator('button.merge').count() === 0 && record.merged?.agentId === 'fixer' && record.merged.automatic === true,
    `the scoreboard says what auto_merge merged (hydra's record: ${JSON.stringify(record.merged)}), with no Merge button: ${summary}`);
    await wb.shot('auto-merged');
  } catch (e) {
    await scenarioFailed(wb, 'agents', e);
  } finally {
    await rpc?.close().catch(() => undefined);
    await wb?.close();
  }
  return run;
}

/** Runs a collaboration through `rpc` (another hydra serve) until hydra/raceFinished; answers hydra/collab's answer and its notifications, in order. */
async function collabThrough(rpc, params) {
  const started = await rpc.request('hydra/collab', params);
  await waitFor(() => rpc.notifications.some((n) => n.method === 'hydra/raceFinished' && n.params.raceId === started.raceId),
    120000, `collaboration ${started.raceId} to finish`);
  return { started, notifications: rpc.notifications.filter((n) => n.params?.raceId === started.raceId) };
}

const COLLAB_ID = /collaboration (\d{8}-\d{6}-[0-9a-f]+) started/;

/**
 * Collaborations: mason builds, critic reviews (fixtures/collab-agent.sh).
 * Iteration 1 leaves add() broken and is asked to handle the empty cart;
 * iteration 2 does, and critic answers LGTM. First one raced through
 * another hydra serve before VS Code opens (what hydra sends is checked
 * against the protocol, and VS Code shows it from hydra/races), then one
 * started from the palette: the pick of its agents, its progress, its
 * phases in the view while it runs, its iterations with their scores, the
 * review as a Markdown document, an iteration's diff, the merge of
 * builder@2; then one cancelled from its progress notification.
 */
async function collabScenario() {
  const run = runFolder('collab');
  const repo = makeRepo(path.join(run, 'cart'), { collab: { delaySeconds: 2 } });
  let wb;
  let rpc;
  try {
    // Before VS Code opens: a collaboration it sees only as hydra recorded it.
    const elsewhere = new HydraRpc(hydra, repo);
    await elsewhere.initialize();
    const { started, notifications } = await collabThrough(elsewhere, { task: 'An earlier collaboration', builder: 'mason', reviewer: 'critic' });
    const { races: [earlier] } = await elsewhere.request('hydra/status', { raceId: started.raceId });
    await elsewhere.close();
    check(started.kind === 'collab' && started.collaboration?.builder === 'mason' && started.collaboration?.reviewer === 'critic' &&
      Array.isArray(started.iterations) && started.agents?.map((a) => a.agentId).join() === 'builder,reviewer',
    `hydra/collab answers a RaceSummary of kind collab with its collaboration and iterations: ${JSON.stringify({
      kind: started.kind, collaboration: started.collaboration, iterations: started.iterations, agents: started.agents?.map((a) => a.agentId) })}`);
    const seen = notifications.map((n) => {
      const p = n.params;
      if (n.method === 'hydra/agentStarted') return `started ${p.agentId} ${p.phase}@${p.iteration}`;
      if (n.method === 'hydra/scoringStarted') return `scoring @${p.iteration}`;
      if (n.method === 'hydra/iterationFinished') return `iteration ${p.iteration} ${p.next}${p.stopReason ? ` (${p.stopReason})` : ''}`;
      if (n.method === 'hydra/raceFinished') return `finished ${p.status} ${p.winner} (${p.stopReason})`;
      return undefined;
    }).filter(Boolean);
    const expected = ['started builder build@1', 'scoring @1', 'started reviewer review@1', 'iteration 1 refine', 'started builder refine@2',
      'scoring @2', 'started reviewer review@2', 'iteration 2 stop (approved)', 'finished completed builder@2 (approved)'];
    check(JSON.stringify(seen) === JSON.stringify(expected),
      `a collaboration's notifications come as the protocol says, in order: ${seen.join(' | ')}`);
    const finished = notifications.filter((n) => n.method === 'hydra/iterationFinished').map((n) => n.params);
    check(finished.length === 2 && finished[0].score?.agentId === 'builder@1' && typeof finished[0].score?.total === 'number' &&
      finished[0].score?.breakdown && /Please handle the empty cart/.test(finished[0].review ?? '') && finished[0].approved === false &&
      finished[1].review?.trim() === 'LGTM' && finished[1].approved === true && finished[1].score?.total < 100,
    `hydra/iterationFinished carries the score (an AgentScore of builder@N) and the reviewer's stdout as its review: ${JSON.stringify(
      finished.map((f) => ({ iteration: f.iteration, total: f.score?.total, agentId: f.score?.agentId, review: f.review, approved: f.approved })))}`);
    check(earlier.kind === 'collab' && earlier.winner === 'builder@2' && earlier.collaboration?.stopReason === 'approved' &&
      earlier.iterations?.length === 2 && earlier.iterations.every((i) => typeof i.score === 'number' && i.breakdown) &&
      earlier.iterations[0].review === finished[0].review,
    `hydra/status gives the collaboration's iterations, winner and stop reason: ${JSON.stringify({ winner: earlier.winner,
      collaboration: earlier.collaboration, iterations: earlier.iterations?.map((i) => ({ ...i, review: i.review?.slice(0, 30) })) })}`);

    wb = await Workbench.open({
      run, folder: repo, settings: { 'hydra.serverPath': hydra }, vsix, port: await port(4), trust: true, prefix: 'collab',
    });
    const page = wb.page;
    await page.locator('.activitybar [aria-label^="Hydra"]').first().waitFor({ timeout: 30000 });
    rpc = new HydraRpc(hydra, repo);
    await rpc.initialize();
    // A row as "label description" (its innerText runs them together).
    const labelled = (e) => [e.querySelector('.label-name'), e.querySelector('.label-description')]
      .map((part) => (part?.textContent ?? '').trim()).filter((t) => t).join(' ');
    const rowText = async (row) => row.evaluate(labelled);
    const expand = async (row) => {
      if ((await row.getAttribute('aria-expanded')) !== 'true') await row.locator('.label-name').first().click();
      await waitFor(async () => (await row.getAttribute('aria-expanded')) === 'true', 10000, 'the row to expand');
    };

    // The earlier collaboration, from hydra/races: its iterations with their scores, its best starred.
    let sidebar = await wb.hydraView();
    const earlierRow = sidebar.locator('.monaco-list-row[aria-level="1"]', { hasText: 'An earlier collaboration' }).first();
    await earlierRow.waitFor({ timeout: 30000 });
    const earlierText = await rowText(earlierRow);
    check(/collab · completed · approved by the reviewer · best builder@2/.test(earlierText),
      `a collaboration from hydra/races says it stopped approved, and its best iteration: ${earlierText}`);
    await expand(earlierRow);
    const rowsAt = async (level) => sidebar.locator(`.monaco-list-row[aria-level="${level}"]`).evaluateAll((els) => els.map((e) =>
      [e.querySelector('.label-name'), e.querySelector('.label-description')].map((part) => (part?.textContent ?? '').trim())
        .filter((t) => t).join(' ')));
    const levelTwo = () => rowsAt(2);
    const earlierRows = await waitFor(async () => {
      const rows = await levelTwo();
      return rows.length >= 4 ? rows : undefined;
    }, 20000, 'the earlier collaboration\'s iterations');
    const [s1, s2] = earlier.iterations.map((i) => i.score.toFixed(1));
    check(earlierRows[0].startsWith('builder@1') && earlierRows[0].includes(s1) && /review: Please handle the empty cart/.test(earlierRows[0]) &&
      earlierRows[1].startsWith('builder@2') && earlierRows[1].includes(s2) && /winner/.test(earlierRows[1]) &&
      /stopped: approved by the reviewer/.test(earlierRows[1]) && /^builder\b/.test(earlierRows[2]) && /^reviewer\b/.test(earlierRows[3]),
    `its rows: the iterations with hydra's scores (${s1}, ${s2}), the review's first line, the winner, why it stopped, then its agents: ${
      earlierRows.join(' | ')}`);
    await wb.shot('earlier-collab');
    await earlierRow.locator('.label-name').first().click(); // folded away again

    // Start Collaboration from the palette: the task, the builder, the reviewer.
    await wb.palette('Hydra: Start Collaboration');
    await page.locator('.quick-input-widget input').waitFor({ state: 'visible' });
    const task = 'Handle the empty cart';
    await page.keyboard.type(task);
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'mason' }).first().waitFor({ timeout: 30000 });
    const builderTitle = (await page.locator('.quick-input-title').innerText()).trim();
    const firstBuilder = (await page.locator('.quick-input-list .monaco-list-row[data-index="0"]').innerText()).replace(/\n/g, ' ');
    check(/builder/.test(builderTitle), `the first pick asks for the builder: ${builderTitle}; first row: ${firstBuilder}`);
    log(/hydra\.toml's builder/.test(firstBuilder) ? 'hydra names [collaboration]\'s builder: it comes first'
      : 'hydra does not name [collaboration]\'s builder: the pick has no default');
    await wb.shot('collab-builder');
    await wb.pick('mason');
    await waitFor(async () => /reviewer/.test(await page.locator('.quick-input-title').innerText()), 20000, 'the reviewer pick');
    const reviewerTitle = (await page.locator('.quick-input-title').innerText()).trim();
    check(/reviewer of mason/.test(reviewerTitle), `then the reviewer: ${reviewerTitle}`);
    await wb.pick('critic');
    const startedText = await waitFor(async () => {
      for (const t of await page.locator('.statusbar-item', { hasText: 'collaboration' }).allInnerTexts()) if (COLLAB_ID.test(t)) return t;
      return undefined;
    }, 30000, 'the status bar to say the collaboration started');
    const collabId = COLLAB_ID.exec(startedText)[1];
    check(/mason builds, critic reviews/.test(startedText), `the collaboration started: ${startedText.trim()}`);
    const progress = await wb.toast('Collaborating');
    check(/Collaborating: mason builds, critic reviews/.test(progress), `its progress is a notification: ${progress}`);
    await wb.shot('collab-started');

    // While it runs, the view says what it does; hydra's notifications move it on.
    sidebar = await wb.hydraView();
    const collabRow = sidebar.locator('.monaco-list-row[aria-level="1"]', { hasText: task }).first();
    await collabRow.waitFor({ timeout: 20000 });
    const phases = new Set();
    let liveRows = new Set();
    const done = await waitFor(async () => {
      const t = await rowText(collabRow);
      const phase = /iteration \d: \w+/.exec(t)?.[0];
      if (phase) phases.add(phase);
      for (const r of await levelTwo()) if (/^builder@\d/.test(r)) liveRows.add(r.split(' · ')[0] + (/…/.test(r) ? ' (in progress)' : ''));
      return /collab · completed/.test(t) ? t : undefined;
    }, 120000, 'the collaboration to complete');
    check(phases.size >= 2 && [...phases].some((p) => /iteration 1: (building|scoring|reviewing)/.test(p)) &&
      [...phases].some((p) => /iteration 2: (refining|scoring|reviewing)/.test(p)),
    `the view shows the phase in progress as it moves on: ${[...phases].join(', ')}`);
    check([...liveRows].some((r) => /in progress/.test(r)), `an iteration in progress has its row while it runs: ${[...liveRows].join(', ')}`);
    check(/approved by the reviewer · best builder@2/.test(done), `then says it stopped approved, and its best: ${done}`);

    // Its iterations, against hydra/status.
    const { races: [collab] } = await rpc.request('hydra/status', { raceId: collabId });
    await expand(collabRow);
    const iterRow = (n) => sidebar.locator('.monaco-list-row[aria-level="2"]', { hasText: `builder@${n}` }).first();
    const [t1, t2] = await waitFor(async () => {
      const rows = [await rowText(iterRow(1)), await rowText(iterRow(2))];
      return rows.every((r) => /\d+\.\d/.test(r)) && /winner/.test(rows[1]) ? rows : undefined;
    }, 20000, 'the iterations with their scores');
    const [c1, c2] = collab.iterations.map((i) => i.score.toFixed(1));
    check(collab.iterations.length === 2 && t1.includes(c1) && t2.includes(c2) && /review: Please handle the empty cart\./.test(t1) &&
      /winner · approved · stopped: approved by the reviewer/.test(t2) && await iterRow(2).locator('.codicon-star-full').count() === 1 &&
      await iterRow(1).locator('.codicon-star-full').count() === 0,
    `the view shows 2 iterations with hydra's scores (${c1}, ${c2}), the first's review, the second starred as the winner: ${t1} | ${t2}`);
    // The tooltip has the breakdown.
    // A hover that a busy machine misses is tried again, from outside the row.
    const hover = page.locator('.monaco-hover, .workbench-hover, .custom-hover', { hasText: 'diff size' }).first();
    const hoverText = await waitFor(async () => {
      await page.mouse.move(0, 0);
      await iterRow(1).locator('.label-name').first().hover();
      const t = await hover.waitFor({ state: 'visible', timeout: 5000 }).then(() => hover.innerText()).catch(() => '');
      return t.includes('diff size') ? t : undefined;
    }, 30000, 'the iteration tooltip').catch(() => '');
    const b = collab.iterations[0].breakdown;
    check(hoverText.includes(`score ${c1} / 100: build ${b.build} · tests ${b.tests}`) && /review \(critic\):/.test(hoverText),
      `an iteration's tooltip has its score's breakdown and its review: ${hoverText.replace(/\n/g, ' | ')}`);
    await wb.shot('collab-iterations');
    await page.mouse.move(0, 0);

    // The review opens as a Markdown document with the reviewer's text.
    await wb.inline(iterRow(1), 'Show Review');
    await wb.waitActiveTab(/builder@1 review\.md/, 'the review of iteration 1');
    const review = await wb.waitProbe((p) => p.activeTab?.kind === 'text' && /builder@1 review/.test(p.activeTab.label) &&
      p.activeTab.text !== undefined && p.activeTab, 'the review document');
    check(review.languageId === 'markdown' && review.uri.startsWith('hydra-review:') && review.text === collab.iterations[0].review &&
      /^Please handle the empty cart\.\n\n- `cart_total` with no items must print 0\./.test(review.text),
    `the review opens as a Markdown document (${review.languageId}, ${review.uri}) with the reviewer's text: ${JSON.stringify(review.text)}`);
    await wb.shot('collab-review');

    // Iteration 1's diff: the iteration's inline Show Diff, then the only file it changed.
    await wb.inline(iterRow(1), 'Show Diff');
    await wb.waitActiveTab(/cart\.sh \(base ↔ builder@1\)/, "builder@1's diff");
    const diff1 = await wb.waitProbe((p) => p.activeTab?.kind === 'diff' && /builder@1/.test(p.activeTab.label) &&
      p.activeTab.modifiedText !== undefined && p.activeTab, 'its sides');
    const cartOf = async (agentId) => (await rpc.request('hydra/diff', { raceId: collabId, agentId, path: 'cart.sh' })).agent;
    check(hydraSide(diff1.modified).agent === 'builder@1' && diff1.originalText === '' && diff1.modifiedText === await cartOf('builder@1') &&
      !/empty cart/.test(diff1.modifiedText),
    `builder@1's diff opens in the diff editor: cart.sh as iteration 1 wrote it (${hydraSide(diff1.modified).agent})`);
    // Iteration 2's: from its files, under its review.
    await expand(iterRow(2));
    const levelThree = sidebar.locator('.monaco-list-row[aria-level="3"]');
    await waitFor(async () => (await levelThree.allInnerTexts()).some((t) => /prices\.csv/.test(t)), 20000, "builder@2's files");
    const children = await rowsAt(3);
    check(/^review\b.*approved · LGTM/.test(children[0] ?? '') && ['cart.sh', 'lib.sh', 'prices.csv'].every((f) => children.some((c) => c.startsWith(f))),
      `an iteration lists its review, then the files it changed: ${children.join(' | ')}`);
    await levelThree.filter({ hasText: 'lib.sh' }).first().click();
    await wb.waitActiveTab(/lib\.sh \(base ↔ builder@2\)/, "builder@2's lib.sh");
    const diff2 = await wb.waitProbe((p) => p.activeTab?.kind === 'diff' && /builder@2/.test(p.activeTab.label) &&
      p.activeTab.modifiedText !== undefined && p.activeTab, 'its sides');
    check(/\$1 - \$2/.test(diff2.originalText) && /\$1 \+ \$2/.test(diff2.modifiedText), 'a file of builder@2 opens its diff: add() fixed');
    await wb.shot('collab-diff');

    // All of iteration 2's changes at once, from its context menu: the three files it changed, in the changes editor.
    const iterChanges = page.locator('.part.editor .editor-group-container.active .editor-container').first();
    const iterText = async () => plain(await iterChanges.innerText());
    await wb.contextMenu(iterRow(2), 'Show All Changes');
    const iterTab = await wb.waitActiveTab(/All changes \(base ↔ builder@2\)/, 'the changes editor of builder@2');
    const iterAll = await waitFor(async () => {
      const t = await iterText();
      return ['cart.sh', 'lib.sh', 'prices.csv'].every((f) => t.includes(f)) && /An empty cart costs nothing/.test(t) &&
        /\$1 \+ \$2/.test(t) ? t : undefined;
    }, 20000, "builder@2's files in the changes editor").catch(iterText);
    check(['cart.sh', 'lib.sh', 'prices.csv'].every((f) => iterAll.includes(f)) && /An empty cart costs nothing/.test(iterAll) &&
      /\$1 \+ \$2/.test(iterAll),
    `Show All Changes on an iteration opens "${iterTab}" with every file iteration 2 changed: ${iterAll.replace(/\s+/g, ' ').slice(0, 300)}`);
    await page.mouse.move(900, 450);
    await wb.shot('collab-all-changes');
    // Both iterations side by side, from the collaboration's context menu: the first iteration picked, the
    // other one follows; builder@2, the winner, on the left. Only builder@2 fixed add() and wrote prices.csv.
    await wb.contextMenu(collabRow, 'Compare All Changes of Two Agents');
    await wb.pick('builder@1');
    const itersTab = await wb.waitActiveTab(/All changes \(builder@2 ↔ builder@1\)/, 'the changes editor of both iterations');
    const sideText = async (side) => plain((await iterChanges.locator(`.editor.${side} .view-lines`).allInnerTexts()).join('\n'));
    const [left, right] = await waitFor(async () => {
      const [l, r] = [await sideText('original'), await sideText('modified')];
      return /An empty cart costs nothing/.test(l) && /\$1 \+ \$2/.test(l) && /cart_total/.test(r) ? [l, r] : undefined;
    }, 20000, 'both iterations\' files in the changes editor').catch(async () => [await sideText('original'), await sideText('modified')]);
    const itersAll = await iterText();
    check(['cart.sh', 'lib.sh', 'prices.csv'].every((f) => itersAll.includes(f)) && /An empty cart costs nothing/.test(left) &&
      /\$1 \+ \$2/.test(left) && /cart_total/.test(right) && !/An empty cart costs nothing/.test(right),
    `Compare All Changes of a collaboration opens "${itersTab}": builder@2's files on the left, builder@1's on the right: ${
      left.replace(/\s+/g, ' ').slice(0, 150)} | ${right.replace(/\s+/g, ' ').slice(0, 150)}`);
    await page.mouse.move(900, 450);
    await wb.shot('collab-compare-all-changes');

    // Merge builder@2 from its row: the winner, so a plain question; its change lands.
    const headBefore = git(repo, 'rev-parse', 'HEAD');
    await wb.inline(iterRow(2), 'Merge Agent');
    const dialog = await wb.dialog();
    check(/Merge builder@2, the winner, into main\?/.test(dialog.text) && dialog.primary.join() === 'Merge',
      `merging builder@2 asks first, as the winner: ${dialog.text}`);
    await dialog.press('Merge');
    const merged = await wb.toast('merged builder@2 into main');
    const cart = fs.readFileSync(path.join(repo, 'cart.sh'), 'utf8');
    check(git(repo, 'rev-parse', 'HEAD') !== headBefore && /An empty cart costs nothing/.test(cart) &&
      /\$1 \+ \$2/.test(fs.readFileSync(path.join(repo, 'lib.sh'), 'utf8')) && fs.existsSync(path.join(repo, 'prices.csv')) &&
      git(repo, 'status', '--porcelain') === '',
    `merging builder@2 lands iteration 2's change in the repository: ${merged}`);
    const mergedRow = await waitFor(async () => {
      const t = await rowText(iterRow(2));
      return /merged into main/.test(t) ? t : undefined;
    }, 20000, 'builder@2 to show as merged');
    const collabMerged = await waitFor(async () => {
      const t = await rowText(collabRow);
      return /merged builder@2 into main/.test(t) ? t : undefined;
    }, 20000, 'the collaboration to show as merged');
    check(await iterRow(2).locator('.codicon-git-merge').count() === 1, `the view marks builder@2 and the collaboration merged: ${mergedRow} | ${collabMerged}`);
    await wb.shot('collab-merged');

    // A collaboration cancelled from its progress notification (dawdler takes a minute to build): hydra stops it.
    await wb.palette('Notifications: Clear All Notifications');
    await wb.palette('Hydra: Start Collaboration');
    await page.locator('.quick-input-widget input').waitFor({ state: 'visible' });
    await page.keyboard.type('A collaboration to cancel');
    await page.keyboard.press('Enter');
    await wb.pick('dawdler');
    await waitFor(async () => /reviewer/.test(await page.locator('.quick-input-title').innerText()), 20000, 'the reviewer pick');
    await wb.pick('critic');
    // Its progress: the title stays, the message (the task at first) moves on with the phases.
    await wb.notification('Collaborating: dawdler builds', 30000);
    const cancelledId = await waitFor(async () => {
      for (const t of await page.locator('.statusbar-item', { hasText: 'collaboration' }).allInnerTexts()) {
        const id = COLLAB_ID.exec(t)?.[1];
        if (id && id !== collabId) return id;
      }
      return undefined;
    }, 20000, 'the second collaboration to start');
    await wb.clickNotificationButton('Collaborating: dawdler builds', 'Cancel');
    const cancelled = await waitFor(async () => {
      const { races: [r] } = await rpc.request('hydra/status', { raceId: cancelledId });
      return r.state === 'cancelled' ? r : undefined;
    }, 30000, 'the collaboration to be cancelled');
    check(cancelled.agents.every((a) => a.state !== 'running') && cancelled.agents.find((a) => a.agentId === 'builder')?.state === 'cancelled',
      `Cancel on its progress notification cancels the collaboration: ${cancelled.agents.map((a) => `${a.agentId} ${a.state}`).join(', ')}`);
    await waitFor(async () => /collab · cancelled/.test(await rowText(sidebar.locator('.monaco-list-row[aria-level="1"]',
      { hasText: 'A collaboration to cancel' }).first())), 20000, 'the view to show it cancelled');
    await wb.shot('collab-cancelled');
  } catch (e) {
    await scenarioFailed(wb, 'collab', e);
  } finally {
    await rpc?.close().catch(() => undefined);
    await wb?.close();
  }
  return run;
}

async function untrustedScenario() {
  const run = runFolder('untrusted');
  const repo = makeRepo(path.join(run, 'calc'));
  // hydra.serverPath points at a wrapper that records being started.
  const marker = path.join(run, 'hydra-was-started');
  const wrapper = path.join(run, 'hydra-wrapper.sh');
  fs.writeFileSync(wrapper, `#!/bin/sh\ntouch '${marker}'\nexec '${hydra}' "$@"\n`, { mode: 0o755 });
  let wb;
  try {
    wb = await Workbench.open({
      run, folder: repo, settings: { 'hydra.serverPath': wrapper, 'hydra.defaultAgents': ['fixer'] },
      vsix, port: await port(3), trust: false, prefix: 'untrusted',
    });
    const page = wb.page;
    // VS Code asks whether to trust the folder's authors: the user says no.
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: 30000 });
    await wb.shot('trust-prompt');
    await dialog.locator('.monaco-button', { hasText: /don't trust/i }).first().click();
    await page.locator('.activitybar [aria-label^="Hydra"]').first().waitFor({ timeout: 30000 });
    await wb.palette('Hydra: Start Race');
    const refusal = await wb.toast('trusted workspace');
    check(/start only in a trusted workspace/.test(refusal), `an untrusted workspace refuses the race: ${refusal}`);
    await wb.shot('refused');
    const inputOpen = await page.locator('.quick-input-widget input').isVisible();
    check(!inputOpen, 'no task input box was opened');
    check(!fs.existsSync(marker), 'hydra was never started in the untrusted workspace');
    check(git(repo, 'branch', '--list', 'hydra/*') === '', 'no race branch exists');
  } catch (e) {
    await scenarioFailed(wb, 'untrusted', e);
  } finally {
    await wb?.close();
  }
  return run;
}

/**
 * The eval report panel's frame whose page passes `test` ({status, done, total, solved, path, counts}): VS Code
 * nests a webview in two iframes, and a panel drawn again, or hidden, may leave a frame behind.
 */
async function evalFrame(page, test = () => true) {
  for (const frame of page.frames()) {
    try {
      const status = frame.locator('p.status[data-status]');
      if (await status.count() === 0 || await frame.locator('h1', { hasText: /^Eval: / }).count() === 0) continue;
      const data = await status.evaluate((p) => ({ ...p.dataset, counts: p.querySelector('.counts')?.textContent ?? '' }));
      const shown = {
        status: data.status, done: Number(data.done), total: Number(data.total), solved: Number(data.solved), counts: data.counts,
        path: (await frame.locator('p.path code').first().innerText().catch(() => '')).trim(),
      };
      if (test(shown)) return { frame, ...shown };
    } catch { /* a frame being torn down */ }
  }
  return undefined;
}

/** What the eval report panel shows: its agent table's cells by column, its case table's rows and its chart's bar labels. */
async function evalTables(frame) {
  const agents = await frame.locator('table.agents tbody tr').evaluateAll((rows) => Object.fromEntries(rows.map((r) => [r.dataset.agent,
    Object.fromEntries([...r.querySelectorAll('td')].map((td) => [td.dataset.k ? `pass@${td.dataset.k}` : td.dataset.col ?? td.className,
      td.textContent.trim()]))])));
  const cases = await frame.locator('table.cases tbody tr').evaluateAll((rows) => rows.map((r) =>
    `${r.dataset.case}/${r.dataset.agent}: ${[...r.querySelectorAll('td.num')].map((td) => td.textContent.trim()).join(' ')}`));
  const chart = await frame.locator('svg.chart g.group').evaluateAll((groups) => Object.fromEntries(groups.map((g) => [g.dataset.agent,
    [...g.querySelectorAll('text.value')].map((t) => `pass@${t.dataset.k} ${t.textContent}`).join(', ')])));
  return { agents, cases, chart };
}

/** Accepts VS Code's own open dialog (a quick input that takes a path) with `file`; answers the path it offered first. */
async function openDialog(wb, file) {
  const input = wb.page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 15000 });
  // The dialog fills its input in steps: what it offers is what stays.
  let last = '';
  const offered = await waitFor(async () => {
    const value = await input.inputValue();
    const settled = value && !value.startsWith('>') && value === last;
    last = value;
    return settled ? value : undefined;
  }, 10000, 'the dialog to offer a folder').catch(() => last);
  await input.fill(file);
  await wb.page.waitForTimeout(500);
  await wb.page.keyboard.press('Enter');
  return offered;
}

async function evalScenario() {
  const run = runFolder('eval');
  // The demo project (scripts/demo.sh's), whose scripted agents the eval set of this repository is written for.
  const repo = makeDemoRepo(path.join(run, 'shopcart'));
  const set = path.join(hydraRoot, 'examples/eval/shopcart.toml');
  // An eval set with a syntax error on line 3 (an array's value without quotes).
  const broken = path.join(repo, 'broken.toml');
  fs.writeFileSync(broken, '[eval]\nname = "broken"\nagents = [careful\n');
  // Run Eval Set with arguments, as a user binds it: two agents, two samples each.
  const keybindings = [{ key: 'ctrl+alt+9', command: 'hydra.runEvalSet', args: { set, agents: ['careful', 'alternating'], samples: 2 } }];
  let wb;
  let rpc;
  try {
    wb = await Workbench.open({ run, folder: repo, settings: { 'hydra.serverPath': hydra }, keybindings, vsix, port: await port(5), trust: true, prefix: 'eval' });
    const page = wb.page;
    await page.locator('.activitybar [aria-label^="Hydra"]').first().waitFor({ timeout: 30000 });
    rpc = new HydraRpc(hydra, repo);
    await rpc.initialize();

    // Run the set on careful and alternating, two samples each: the panel opens at once, counting.
    await page.locator('.monaco-workbench').click({ position: { x: 700, y: 400 } });
    await page.keyboard.press('Control+Alt+9');
    const running = await waitFor(() => evalFrame(page, (s) => s.status === 'running' || s.status === 'completed'), 30000, 'the eval report panel');
    check(running.total === 4 && /^\d\/4 samples · \d solved$/.test(running.counts),
      `Run Eval Set with {agents: [careful, alternating], samples: 2} opens its panel at once: ${running.status} · ${running.counts}`);
    const progress = await wb.toast('Evaluating shopcart', 15000).catch(() => '');
    check(/Evaluating shopcart/.test(progress), `its progress is a notification: ${progress.replace(/\n/g, ' ')}`);
    await wb.shot('eval-running');
    const seen = new Set();
    const done = await waitFor(async () => {
      const f = await evalFrame(page, (s) => s.total === 4);
      if (f) seen.add(`${f.status} ${f.counts}`);
      return f?.status === 'completed' ? f : undefined;
    }, 120000, 'the evaluation to complete');
    log(`the panel showed: ${[...seen].join(' | ')}`);
    check(done.counts === '4/4 samples · 3 solved' && [...seen].some((s) => /^running /.test(s)),
      `the panel counts the samples while it runs, then says it completed: ${[...seen].join(' | ')}`);
    const { agents, cases, chart } = await evalTables(done.frame);
    const careful = agents.careful ?? {};
    const alternating = agents.alternating ?? {};
    check(careful['pass@1'] === '100.0%' && careful['pass@2'] === '100.0%' && careful.solved === '2/2',
      `careful: pass@1 ${careful['pass@1']}, pass@2 ${careful['pass@2']}, solved ${careful.solved}`);
    check(alternating['pass@1'] === '50.0%' && alternating['pass@2'] === '100.0%' && alternating.solved === '1/2',
      `alternating: pass@1 ${alternating['pass@1']}, pass@2 ${alternating['pass@2']}, solved ${alternating.solved}`);
    check(chart.careful === 'pass@1 100.0%, pass@2 100.0%' && chart.alternating === 'pass@1 50.0%, pass@2 100.0%',
      `the chart has a bar per k for each agent, labelled: ${JSON.stringify(chart)}`);
    const onDisk = JSON.parse(fs.readFileSync(done.path, 'utf8'));
    const diskCases = onDisk.cases.flatMap((c) => c.agents.map((a) => `${c.caseId}/${a.agent}: ${a.n} ${a.c} ${
      onDisk.passK.map((k) => (a.passAtK[k] === null ? 'n/a' : `${(100 * a.passAtK[k]).toFixed(1)}%`)).join(' ')} ${a.meanScore.toFixed(1)}`));
    check(done.path.startsWith(path.join(repo, '.hydra/evals/shopcart-')) && onDisk.samples.length === 4 &&
      JSON.stringify(cases) === JSON.stringify(diskCases),
    `the panel names the report (${done.path}) and its case table is the report's: ${cases.join(' | ')}`);
    check(await wb.activeTab() === 'Hydra Eval: shopcart', `the panel is "${await wb.activeTab()}"`);
    await wb.shot('eval-completed');

    // Open Eval Report: the dialog starts in .hydra/evals/; the report opens in the same view.
    await wb.palette('View: Close All Editors');
    await wb.palette('Hydra: Open Eval Report');
    const offered = await openDialog(wb, done.path);
    check(offered.replace(/\/$/, '') === path.join(repo, '.hydra/evals'), `Open Eval Report's dialog starts in .hydra/evals: ${offered}`);
    const reopened = await waitFor(() => evalFrame(page, (s) => s.status === 'finished' && s.path === done.path), 30000, 'the report opened');
    const again = await evalTables(reopened.frame);
    check(reopened.counts === '4 samples · 3 solved' && JSON.stringify(again.agents) === JSON.stringify(agents) &&
      await wb.activeTab() === 'Hydra Eval: shopcart',
    `the report opened from its file shows the same tables: finished · ${reopened.counts}`);
    await wb.shot('eval-opened');

    // The same from the explorer: a report under .hydra/evals/ has Open Eval Report in its context menu.
    await wb.palette('View: Close All Editors');
    await wb.palette('View: Show Explorer');
    const explorerRow = (name) => page.locator('.explorer-folders-view .monaco-list-row', { hasText: name }).first();
    for (const folder of ['.hydra', 'evals']) {
      await explorerRow(folder).waitFor({ timeout: 20000 });
      if (await explorerRow(folder).getAttribute('aria-expanded') !== 'true') await explorerRow(folder).click();
    }
    await explorerRow(path.basename(done.path)).waitFor({ timeout: 20000 });
    await wb.contextMenu(explorerRow(path.basename(done.path)), 'Open Eval Report');
    const fromExplorer = await waitFor(() => evalFrame(page, (s) => s.status === 'finished' && s.path === done.path), 30000, 'the report opened');
    check(fromExplorer.counts === '4 samples · 3 solved', `Open Eval Report from the report's context menu in the explorer: ${fromExplorer.counts}`);
    await explorerRow('.hydra').click(); // folded away again

    // A broken set, from the explorer's context menu: hydra's file:line:column, and a button that goes there.
    let expected;
    try {
      await rpc.request('hydra/evalRun', { set: broken });
    } catch (e) {
      expected = e.error;
    }
    await wb.palette('View: Close All Editors');
    const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'broken.toml' }).first();
    await row.waitFor({ timeout: 20000 });
    await wb.shot('eval-explorer');
    await wb.contextMenu(row, 'Run Eval Set');
    const place = `${broken}:${expected?.data?.line}:${expected?.data?.column}`;
    const said = await wb.toast('broken.toml:');
    check(expected?.code === -32023 && expected.data.line === 3 && said.startsWith(`Hydra: ${place}: `),
      `a broken eval set is an error at its file:line:column (${expected?.code}): ${said}`);
    check(await wb.toastCount('broken.toml:') === 1, 'said once');
    await wb.shot('eval-broken');
    await wb.palette('View: Close All Editors');
    await wb.clickNotificationButton('broken.toml:', 'Open Eval Set');
    await wb.waitActiveTab(/^broken\.toml/, 'the broken set opened');
    const cursor = await waitFor(async () => {
      for (const t of await page.locator('.statusbar-item').allInnerTexts()) if (/^Ln \d+, Col \d+/.test(t.trim())) return t.trim();
      return undefined;
    }, 10000, 'the cursor position');
    check(cursor.startsWith(`Ln ${expected?.data?.line}, Col ${expected?.data?.column}`), `Open Eval Set puts the cursor there: ${cursor}`);
    await wb.shot('eval-broken-opened');

    // The set's own agents and samples, from its editor; cancelled from the progress notification.
    await wb.palette('Notifications: Clear All Notifications');
    // Go to File takes an absolute path: the set lies outside the workspace.
    await wb.palette('Go to File...');
    await page.locator('.quick-input-widget input').fill(set);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'shopcart.toml' }).first().waitFor({ timeout: 15000 });
    await page.keyboard.press('Enter');
    await wb.waitActiveTab(/^shopcart\.toml/, 'the eval set in its editor');
    await wb.palette('Hydra: Run Eval Set');
    const started = await waitFor(() => evalFrame(page, (s) => s.status === 'running' && s.total === 12 && s.done >= 1), 60000,
      'the first samples of the set as it is');
    check(await wb.activeTab() === 'shopcart.toml', `run from its editor, the panel opens beside it (the editor keeps the keyboard): ${started.counts}`);
    await wb.clickNotificationButton('Evaluating shopcart', 'Cancel');
    const cancelled = await waitFor(() => evalFrame(page, (s) => s.path === started.path && s.status === 'cancelled'), 60000, 'the evaluation cancelled');
    const kept = JSON.parse(fs.readFileSync(cancelled.path, 'utf8'));
    const note = await cancelled.frame.locator('p.note').innerText().catch(() => '');
    check(cancelled.total === 12 && cancelled.done < 12 && kept.samples.length === cancelled.done && /--resume/.test(note),
      `Cancel on its progress notification cancels it: ${cancelled.status} · ${cancelled.counts}; the report keeps ${kept.samples.length} sample(s)`);
    await wb.shot('eval-cancelled');

    // Again, cancelled from the panel's own Cancel button (hydra/evalCancel).
    await wb.palette('Hydra: Run Eval Set');
    const second = await waitFor(() => evalFrame(page, (s) => s.status === 'running' && s.total === 12 && s.path !== started.path && s.done >= 1),
      60000, 'the second run');
    await waitFor(async () => {
      const f = await evalFrame(page, (s) => s.path === second.path);
      if (f?.status !== 'running') return f;
      await f.frame.locator('button.cancel').click({ timeout: 2000 });
      return undefined;
    }, 30000, 'the panel\'s Cancel');
    const stopped = await waitFor(() => evalFrame(page, (s) => s.path === second.path && s.status === 'cancelled'), 60000, 'the second run cancelled');
    check(stopped.done < 12, `the panel's Cancel button cancels it: ${stopped.status} · ${stopped.counts}`);
    await wb.shot('eval-cancelled-from-panel');
  } catch (e) {
    await scenarioFailed(wb, 'eval', e);
  } finally {
    await rpc?.close().catch(() => undefined);
    await wb?.close();
  }
  return run;
}

fs.mkdirSync(shots, { recursive: true });
for (const f of fs.readdirSync(shots)) if (f.endsWith('.png')) fs.rmSync(path.join(shots, f));
// HYDRA_E2E_SCENARIOS (e.g. "collab,untrusted") runs only those.
const scenarios = {
  race: raceScenario, history: historyScenario, agents: agentsScenario, collab: collabScenario, untrusted: untrustedScenario, eval: evalScenario,
};
const only = (process.env.HYDRA_E2E_SCENARIOS || '').split(',').map((s) => s.trim()).filter(Boolean);
const runs = [];
for (const [name, scenario] of Object.entries(scenarios)) if (only.length === 0 || only.includes(name)) runs.push(await scenario());
const passed = results.filter(Boolean).length;
const failed = results.length - passed;
console.log(`${passed} passed, ${failed} failed`);
if (failed === 0) for (const r of runs) fs.rmSync(r, { recursive: true, force: true });
log(`screenshots in ${shots}${failed ? `; logs in ${runs.join(', ')}` : ''}`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
