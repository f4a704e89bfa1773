// End to end in a real VS Code: code-server (VS Code 1.100) with the built
// .vsix installed, driven in Debian's chromium by playwright-core.
//  1. race: a throwaway git repository with two scripted agents; "Hydra: Start
//     Race" from the palette; then what the user sees is checked: the agents'
//     output channels, the scoreboard (against hydra/scores asked directly),
//     a diff editor opened from the Hydra view, and a merge that changes the
//     repository.
//  2. untrusted: the same kind of repository in an untrusted workspace: no
//     race starts and hydra is never even started.
// Screenshots of every step go to $HYDRA_E2E_SHOTS.
//
// Environment: HYDRA_BIN (hydra binary), HYDRA_VSIX (the packaged extension),
// HYDRA_E2E_TOOLS (where install-tools.sh put code-server and playwright-core),
// HYDRA_E2E_SHOTS (screenshot folder), HYDRA_E2E_PORT (default: free ports;
// when set, the second scenario uses the next one).
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

async function raceScenario() {
  const run = runFolder('race');
  // The agents think for 3 s: long enough to see the race run.
  const repo = makeRepo(path.join(run, 'calc'), { agentDelaySeconds: 3 });
  const settings = { 'hydra.serverPath': hydra, 'hydra.defaultAgents': ['fixer', 'breaker'], 'hydra.logLevel': 'debug' };
  let wb;
  let rpc;
  try {
    wb = await Workbench.open({ run, folder: repo, settings, vsix, port: await port(0), trust: true, prefix: 'race' });
    const page = wb.page;
    await page.locator('.activitybar [aria-label^="Hydra"]').first().waitFor({ timeout: 30000 });
    check(true, 'the .vsix is installed and VS Code shows the Hydra view container');
    await wb.shot('workbench');

    // Start a race from the palette: the task, then the agents (hydra.defaultAgents already picked).
    await wb.palette('Hydra: Start Race');
    await page.locator('.quick-input-widget input').waitFor({ state: 'visible' });
    await page.keyboard.type('Make add() add its arguments');
    await wb.shot('task');
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'fixer' }).first().waitFor({ timeout: 30000 });
    const checked = await page.locator('.quick-input-list .monaco-list-row input[type=checkbox]:checked, .quick-input-list .monaco-list-row .monaco-custom-toggle.checked').count();
    check(checked === 2, `the agent pick lists hydra/agents with hydra.defaultAgents picked (${checked} checked)`);
    await wb.shot('agents');
    await page.keyboard.press('Enter');
    const started = await wb.toast('started with');
    const raceId = /race (\d{8}-\d{6}-[0-9a-f]+)/.exec(started)?.[1];
    check(Boolean(raceId), `race started: ${started}`);
    // While it runs: hydra's $/progress as a notification, and the status bar item.
    const progress = await wb.toast('Racing 2 agents');
    check(/Racing 2 agents/.test(progress), `the race's progress is a notification: ${progress}`);
    const status = page.locator('.statusbar-item', { hasText: 'Hydra:' }).first();
    await status.waitFor({ timeout: 10000 });
    check(/agents done/.test(await status.innerText()), `a status bar item shows the race: ${await status.innerText()}`);
    await wb.shot('race-running');

    // The scoreboard opens by itself once the race is scored.
    const frame = await waitFor(() => scoreboardFrame(page), 90000, 'the scoreboard');
    const cards = await frame.locator('section.card').evaluateAll((els) => els.map((e) => ({
      agentId: e.dataset.agent, rank: Number(e.dataset.rank), total: Number(e.querySelector('.total').dataset.total),
      band: e.querySelector('.total').className.replace('total', '').trim(),
    })));
    rpc = new HydraRpc(hydra, repo);
    await rpc.initialize();
    const scores = await rpc.request('hydra/scores', { raceId });
    const expected = scores.rankings.map((r) => ({ agentId: r.agentId, rank: r.rank, total: r.total }));
    check(JSON.stringify(cards.map(({ band, ...c }) => c)) === JSON.stringify(expected),
      `the scoreboard shows the ranking hydra/scores returns: ${JSON.stringify(cards)}`);
    check(cards[0]?.agentId === 'fixer' && cards[0].band === 'good' && cards.at(-1)?.band === 'poor',
      'the winner is green and the broken agent red');
    await frame.locator('section.card[data-agent="breaker"] details[data-check="build"] summary').click();
    const buildOutput = await frame.locator('section.card[data-agent="breaker"] details[data-check="build"] pre').innerText();
    check(/Syntax error|unexpected|expecting/i.test(buildOutput), `the raw build output expands: ${buildOutput.trim()}`);
    await page.waitForTimeout(300);
    await wb.shot('scoreboard');
    // The card's Merge button asks first; Cancel leaves the repository alone.
    const headAtScore = git(repo, 'rev-parse', 'HEAD');
    await frame.locator('section.card[data-agent="fixer"] button.merge').click();
    const ask = page.locator('.monaco-dialog-box');
    await ask.waitFor({ timeout: 20000 });
    const asked = await ask.innerText();
    await ask.locator('.monaco-button', { hasText: /^Cancel$/ }).click();
    await ask.waitFor({ state: 'hidden', timeout: 10000 });
    check(/Merge fixer into main\?/.test(asked) && git(repo, 'rev-parse', 'HEAD') === headAtScore,
      'the scoreboard\'s Merge button shows the dry run, and Cancel changes nothing');

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

    // The Hydra view: race -> agent -> changed file; clicking the file opens the diff editor.
    const sidebar = page.locator('.part.sidebar');
    // The activity bar's Hydra item toggles the side bar: click it only to open it.
    if (!(await sidebar.isVisible()) || !/Hydra/i.test(await sidebar.locator('.composite.title').innerText())) {
      await page.locator('.activitybar [aria-label^="Hydra"]').first().click();
    }
    const raceRow = sidebar.locator('.monaco-list-row', { hasText: 'Make add() add its arguments' }).first();
    await raceRow.waitFor({ timeout: 20000 });
    if ((await raceRow.getAttribute('aria-expanded')) !== 'true') await raceRow.click();
    const agentRow = sidebar.locator('.monaco-list-row', { hasText: 'fixer' }).first();
    await agentRow.waitFor({ timeout: 20000 });
    if ((await agentRow.getAttribute('aria-expanded')) !== 'true') await agentRow.click();
    const fileRow = sidebar.locator('.monaco-list-row', { hasText: 'lib.sh' }).first();
    await fileRow.waitFor({ timeout: 20000 });
    const agentLabel = await agentRow.innerText();
    check(/completed/.test(agentLabel) && /#1/.test(agentLabel),
      `the view shows the agent's state and score: ${agentLabel.replace(/\n/g, ' ')}`);
    await fileRow.click();
    const diffEditor = page.locator('.monaco-diff-editor').first();
    await diffEditor.waitFor({ timeout: 20000 });
    const side = async (which) => plain(await diffEditor.locator(`.editor.${which} .view-lines`).innerText());
    await waitFor(async () => /\+ \$2/.test(await side('modified')), 20000, 'the agent side');
    const left = await side('original');
    const right = await side('modified');
    check(/\$1 - \$2/.test(left) && /\$1 \+ \$2/.test(right), 'the diff editor shows base and agent versions of lib.sh');
    await wb.shot('diff-editor');

    // Merge the winner: the dry run in a modal confirmation, then the merge.
    const headBefore = git(repo, 'rev-parse', 'HEAD');
    await wb.palette('Hydra: Merge Winner');
    await wb.pick(raceId);
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: 20000 });
    const plan = await dialog.innerText();
    check(/Fast-forward main/.test(plan) && /lib\.sh/.test(plan), `the dry run is shown first: ${plan.replace(/\n+/g, ' | ')}`);
    check(git(repo, 'rev-parse', 'HEAD') === headBefore, 'the dry run changed nothing');
    await wb.shot('merge-confirm');
    await dialog.locator('.monaco-button', { hasText: /^Merge$/ }).click();
    const merged = await wb.toast('merged fixer into main');
    await wb.shot('merged');
    const headAfter = git(repo, 'rev-parse', 'HEAD');
    const lib = fs.readFileSync(path.join(repo, 'lib.sh'), 'utf8');
    check(headAfter !== headBefore && /\$1 \+ \$2/.test(lib) && fs.existsSync(path.join(repo, 'CHANGELOG.md')),
      `merging changed the repository (${merged}; HEAD ${headBefore.slice(0, 8)} -> ${headAfter.slice(0, 8)})`);
    check(git(repo, 'status', '--porcelain') === '', 'the working tree is clean after the merge');

    // A second race, cancelled from its progress notification.
    await wb.palette('Hydra: Start Race');
    await page.locator('.quick-input-widget input').waitFor({ state: 'visible' });
    await page.keyboard.type('A race to cancel');
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'fixer' }).first().waitFor({ timeout: 30000 });
    await page.keyboard.press('Enter');
    const second = /race (\d{8}-\d{6}-[0-9a-f]+)/.exec(await wb.toast('started with'))?.[1];
    const progressToast = page.locator('.notification-toast', { hasText: 'A race to cancel' }).first();
    await progressToast.waitFor({ timeout: 20000 });
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

    // A server error reaches the user with the server's message: hydra.toml broken, then a new race.
    fs.writeFileSync(path.join(repo, 'hydra.toml'), '[general]\nmax_concurrent_agents = \n');
    await wb.palette('Hydra: Start Race');
    await page.locator('.quick-input-widget input').waitFor({ state: 'visible' });
    await page.keyboard.type('Another task');
    await page.keyboard.press('Enter');
    const error = await wb.toast('hydra.toml');
    check(/hydra\.toml:2/.test(error), `a ConfigError is shown with the server's message: ${error}`);
    await wb.shot('server-error');
  } catch (e) {
    check(false, `race scenario: ${e.message}`);
    try { await wb?.shot('error'); } catch { /* the page is gone */ }
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
      vsix, port: await port(1), trust: false, prefix: 'untrusted',
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
    check(false, `untrusted scenario: ${e.message}`);
    try { await wb?.shot('error'); } catch { /* the page is gone */ }
  } finally {
    await wb?.close();
  }
  return run;
}

fs.mkdirSync(shots, { recursive: true });
for (const f of fs.readdirSync(shots)) if (f.endsWith('.png')) fs.rmSync(path.join(shots, f));
const runs = [await raceScenario(), await untrustedScenario()];
const passed = results.filter(Boolean).length;
const failed = results.length - passed;
console.log(`${passed} passed, ${failed} failed`);
if (failed === 0) for (const r of runs) fs.rmSync(r, { recursive: true, force: true });
log(`screenshots in ${shots}${failed ? `; logs in ${runs.join(', ')}` : ''}`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
