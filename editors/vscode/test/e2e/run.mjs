// End to end in a real VS Code: code-server (VS Code 1.100) with the built
// .vsix installed, driven in Debian's chromium by playwright-core.
//  1. race: a throwaway git repository with two scripted agents; a race
//     started from the empty view's welcome button; then what the user sees
//     is checked: the agent pick, the agents' output channels, the scoreboard
//     (against hydra/scores asked directly), the view's rows and each of their
//     inline buttons (diffs, output, scoreboard, merges, with a warning for
//     the agent that lost, cancels), a race every agent fails, races
//     cancelled, the view's title buttons (Start Race, Show Race History,
//     Clean Up), Clean Up Race, and a broken hydra.toml reported once.
//  2. history: races this VS Code never watched (raced through another hydra
//     serve before it opened): an agent's output as a transcript of what
//     hydra stored, its raw log, an agent that failed marked as unable to
//     win (no Merge anywhere, its error shown), and a race every agent
//     failed said to have no winner.
//  3. agents: races hydra refuses for an agent (its binary went away after
//     the pick listed it; renamed in hydra.toml meanwhile), what the user is
//     told (hydra's problem, its "did you mean") and offered (pick again,
//     race with the suggested name), and auto_merge merging the winner.
//  4. untrusted: the same kind of repository in an untrusted workspace: no
//     race starts and hydra is never even started.
// Screenshots of every step go to $HYDRA_E2E_SHOTS.
//
// Environment: HYDRA_BIN (hydra binary), HYDRA_VSIX (the packaged extension),
// HYDRA_E2E_TOOLS (where install-tools.sh put code-server and playwright-core),
// HYDRA_E2E_SHOTS (screenshot folder), HYDRA_E2E_PORT (default: free ports;
// when set, the other scenarios use the next ones).
import fs from 'node:fs';
import path from 'node:path';
import { git, makeRepo } from './repo.mjs';
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
  const settings = { 'hydra.serverPath': hydra, 'hydra.defaultAgents': ['fixer', 'breaker'], 'hydra.logLevel': 'debug' };
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
    const agentRow = sidebar.locator('.monaco-list-row', { hasText: 'fixer' }).first();
    const breakerRow = sidebar.locator('.monaco-list-row', { hasText: 'breaker' }).first();
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
    const progressToast = page.locator('.notification-toast', { hasText: 'Racing 2 agents' }).first();
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
    await progressToast.locator('.monaco-button', { hasText: 'Cancel' }).click();
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

    // A server error reaches the user once, with the server's message: hydra.toml broken, then a new race.
    fs.writeFileSync(path.join(repo, 'hydra.toml'), '[general]\nmax_concurrent_agents = \n');
    const brokenRace = async () => {
      await wb.palette('Hydra: Start Race');
      await page.locator('.quick-input-widget input').waitFor({ state: 'visible' });
      await page.keyboard.type('Another task');
      await page.keyboard.press('Enter');
      const error = await wb.toast('hydra.toml');
      // Anything hydra answers later comes after that error was handled.
      await wb.palette('Hydra: Show Race History');
      await page.locator('.quick-input-list .monaco-list-row', { hasText: raceId }).first().waitFor({ timeout: 20000 });
      await page.keyboard.press('Escape');
      return { error, toasts: await wb.toastCount('hydra.toml is broken') };
    };
    const broken = await brokenRace();
    check(/hydra\.toml:2/.test(broken.error), `a ConfigError is shown with the server's message: ${broken.error}`);
    check(broken.toasts === 1, `one broken hydra.toml, one error toast (${broken.toasts})`);
    await wb.shot('server-error');
    // The user closes it and tries again: hydra does not say it twice, the extension does, once.
    await wb.palette('Notifications: Clear All Notifications');
    await waitFor(async () => (await wb.toastCount('hydra.toml is broken')) === 0, 10000, 'the notification to close');
    const again = await brokenRace();
    check(again.toasts === 1, `once closed, the next race refused for it says so again, once (${again.toasts})`);
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
    const merged = await wb.toast('auto_merge merged fixer', 90000);
    const headAfter = git(repo, 'rev-parse', 'HEAD');
    // A hydra that does not name the branch (targetBranch) gets "your branch".
    check(merged.includes(raceId) && /into (main|your branch)/.test(merged) && headAfter !== headBefore &&
      /\$1 \+ \$2/.test(fs.readFileSync(path.join(repo, 'lib.sh'), 'utf8')),
    `what auto_merge did is said: ${merged} (HEAD ${headBefore.slice(0, 8)} -> ${headAfter.slice(0, 8)})`);
    const scores = await rpc.request('hydra/scores', { raceId });
    const frame = await waitFor(() => scoreboardFrame(page), 30000, 'the scoreboard');
    const summary = await frame.locator('p.summary').innerText();
    // Only a hydra that says auto_merge is on (autoMergeEnabled) gets words about merging automatically.
    const expected = scores.autoMergeEnabled === true ? /good enough to merge automatically \(auto_merge is on\)/ : /eligible to merge/;
    check(expected.test(summary) && (scores.autoMergeEnabled === true || !/automatic/.test(summary)),
      `the scoreboard speaks of auto_merge as hydra does (autoMergeEnabled: ${scores.autoMergeEnabled}): ${summary}`);
    await wb.shot('auto-merged');
  } catch (e) {
    await scenarioFailed(wb, 'agents', e);
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

fs.mkdirSync(shots, { recursive: true });
for (const f of fs.readdirSync(shots)) if (f.endsWith('.png')) fs.rmSync(path.join(shots, f));
const runs = [await raceScenario(), await historyScenario(), await agentsScenario(), await untrustedScenario()];
const passed = results.filter(Boolean).length;
const failed = results.length - passed;
console.log(`${passed} passed, ${failed} failed`);
if (failed === 0) for (const r of runs) fs.rmSync(r, { recursive: true, force: true });
log(`screenshots in ${shots}${failed ? `; logs in ${runs.join(', ')}` : ''}`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
