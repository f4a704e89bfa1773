// What the end-to-end scenarios share: a real VS Code (code-server) with the
// .vsix installed, opened on a folder in Debian's headless chromium, and the
// gestures a user makes there (palette, quick picks, notifications).
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export function need(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

export const tools = need('HYDRA_E2E_TOOLS');
export const shots = need('HYDRA_E2E_SHOTS');
const codeServer = path.join(tools, 'code-server/node_modules/code-server/out/node/entry.js');
const { chromium } = createRequire(path.join(tools, 'driver/package.json'))('playwright-core');

// The code-server process groups running now. A run stopped from outside
// (the test script's timeout, Ctrl-C) ends them before it goes: they are
// their own groups, which a signal to the run's group does not reach.
const liveServers = new Set();
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.once(signal, () => {
    for (const pid of liveServers) { try { process.kill(-pid, 'SIGKILL'); } catch { /* already gone */ } }
    console.error(`stopped by ${signal}`);
    process.exit(1);
  });
}

const t0 = Date.now();
export const log = (...a) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
export const results = [];
export function check(ok, what) {
  results.push(Boolean(ok));
  console.log(`${ok ? 'ok' : 'not ok'} - ${what}`);
  return ok;
}

export async function waitFor(fn, ms, what) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) { last = e; }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (${last.message})` : ''}`);
}

/** Editor text as written: Monaco renders spaces as no-break spaces. */
export function plain(text) {
  return text.replace(/\u00a0/g, ' ');
}

/** A port nobody listens on now (the machine is shared: no fixed port). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** A fresh folder for one scenario under .editor-tests/vscode/runs/. */
export function runFolder(name) {
  fs.mkdirSync(path.join(tools, 'runs'), { recursive: true });
  return fs.mkdtempSync(path.join(tools, 'runs', `${name}-`));
}

export class Workbench {
  /**
   * Installs the .vsix into a fresh profile, starts code-server on `folder`
   * and opens it in chromium. `trust`: whether VS Code's workspace trust is
   * off (true: every folder is trusted) or on (the user is asked). The probe
   * extension ($HYDRA_PROBE_VSIX), when there is one, is installed too: it
   * writes what VS Code's API says to <run>/probe.json (see probe()).
   * `keybindings`: the user's keybindings.json (a command with its `args`
   * bound to a key is how a user runs one with arguments).
   */
  static async open({ run, folder, settings, keybindings, vsix, port, trust, prefix }) {
    const wb = new Workbench(run, prefix);
    const extensions = path.join(run, 'extensions');
    const userData = path.join(run, 'user-data');
    fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
    fs.writeFileSync(path.join(userData, 'User/settings.json'), JSON.stringify({
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'telemetry.telemetryLevel': 'off',
      'extensions.autoUpdate': false,
      'extensions.autoCheckUpdates': false,
      'update.mode': 'none',
      'git.enabled': false,
      'security.workspace.trust.enabled': !trust,
      'security.workspace.trust.startupPrompt': 'always',
      ...settings,
    }, null, 2));
    if (keybindings) fs.writeFileSync(path.join(userData, 'User/keybindings.json'), JSON.stringify(keybindings, null, 2));
    wb.probeFile = path.join(run, 'probe.json');
    const env = {
      ...process.env, XDG_CONFIG_HOME: path.join(run, 'config'), XDG_DATA_HOME: path.join(run, 'data'), HYDRA_E2E_PROBE: wb.probeFile,
    };
    // The real install path: code-server --install-extension <file.vsix>.
    const probe = process.env.HYDRA_PROBE_VSIX;
    const vsixes = probe ? [vsix, probe] : [vsix];
    const install = spawnSync(process.execPath, [codeServer, '--extensions-dir', extensions, '--user-data-dir', userData,
      ...vsixes.flatMap((v) => ['--install-extension', v])], { encoding: 'utf8', env });
    if (install.status !== 0 || (install.stdout.match(/successfully installed/gi) ?? []).length !== vsixes.length) {
      throw new Error(`installing the .vsix failed: ${install.stdout}${install.stderr}`);
    }
    const serverLog = fs.openSync(path.join(run, 'code-server.log'), 'w');
    // Its own process group, so that the extension host and hydra stop with it.
    wb.server = spawn(process.execPath, [codeServer, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none',
      '--disable-telemetry', '--disable-update-check', '--disable-getting-started-override',
      ...(trust ? ['--disable-workspace-trust'] : []),
      '--extensions-dir', extensions, '--user-data-dir', userData, folder],
    { stdio: ['ignore', serverLog, serverLog], detached: true, env });
    liveServers.add(wb.server.pid);
    wb.server.once('exit', () => liveServers.delete(wb.server.pid));
    log('code-server pid', wb.server.pid, 'in', run);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 60000, 'code-server');
    wb.browser = await chromium.launch({
      executablePath: '/usr/bin/chromium', headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
    });
    wb.page = await wb.browser.newPage({ viewport: { width: 1440, height: 900 } });
    wb.page.on('console', (m) => {
      if (m.type() === 'error') fs.appendFileSync(path.join(run, 'browser-console.log'), `${m.text()}\n`);
    });
    await wb.page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(folder)}`);
    await wb.page.waitForSelector('.monaco-workbench', { timeout: 60000 });
    return wb;
  }

  constructor(run, prefix) {
    this.run = run;
    this.prefix = prefix;
    this.step = 0;
  }

  async shot(name) {
    this.step += 1;
    fs.mkdirSync(shots, { recursive: true });
    await this.page.screenshot({ path: path.join(shots, `${this.prefix}-${String(this.step).padStart(2, '0')}-${name}.png`) });
  }

  /** Runs a command from the palette, as a user does. */
  async palette(title) {
    await this.page.keyboard.press('F1');
    const input = this.page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 15000 });
    await input.fill(`>${title}`);
    await this.page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 15000 });
    // A command used recently is listed first when the text matches it too ("Show Agent Output" matches
    // "Show All Agents' Output"): down to the row of this one.
    const focused = this.page.locator('.quick-input-list .monaco-list-row.focused').first();
    for (let i = 0; i < 20 && !(await focused.innerText().catch(() => '')).includes(title); i++) await this.page.keyboard.press('ArrowDown');
    await this.page.keyboard.press('Enter');
  }

  /** Picks the quick pick row holding `text`. */
  async pick(text) {
    const row = this.page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: text }).first();
    await row.waitFor({ state: 'visible', timeout: 20000 });
    await this.page.locator('.quick-input-widget input').fill(text);
    await this.page.waitForTimeout(200);
    await this.page.keyboard.press('Enter');
  }

  /** Waits for a notification toast holding `text`; answers its message. */
  async toast(text, timeout = 30000) {
    const t = this.page.locator('.notification-toast', { hasText: text }).first();
    await t.waitFor({ state: 'visible', timeout });
    await this.page.waitForTimeout(400); // the toast slides in: let it settle for the screenshots
    return (await t.locator('.notification-list-item-message').first().innerText()).trim();
  }

  /**
   * Waits for a notification holding `text`, wherever VS Code keeps it: its toast, or, once VS Code
   * has hidden the toast (after a while, or pushed out by newer ones), its entry in the
   * notification centre. Answers its message.
   */
  async notification(text, timeout = 30000) {
    const deadline = Date.now() + timeout;
    const toast = this.page.locator('.notification-toast', { hasText: text }).first();
    for (;;) {
      try {
        await toast.waitFor({ state: 'visible', timeout: 5000 });
        await this.page.waitForTimeout(400); // the toast slides in: let it settle for the screenshots
        return (await toast.locator('.notification-list-item-message').first().innerText()).trim();
      } catch { /* not a toast (now): look in the centre */ }
      await this.palette('Notifications: Show Notifications');
      const centre = this.page.locator('.notifications-center');
      await centre.waitFor({ state: 'visible', timeout: 10000 });
      const item = centre.locator('.notification-list-item', { hasText: text }).first();
      const found = (await item.count()) > 0
        ? (await item.locator('.notification-list-item-message').first().innerText()).trim() : undefined;
      await this.palette('Notifications: Hide Notifications');
      await centre.waitFor({ state: 'hidden', timeout: 10000 });
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`no notification saying "${text}" within ${timeout} ms`);
    }
  }

  /**
   * Clicks `button` on the notification saying `text`: on its toast, or in the
   * notification centre when VS Code has already hidden the toast there (on a
   * busy machine later notices push it out of view).
   */
  async clickNotificationButton(text, button, timeout = 30000) {
    const deadline = Date.now() + timeout;
    for (;;) {
      const toast = this.page.locator('.notification-toast', { hasText: text }).first();
      const onToast = toast.locator('.monaco-button', { hasText: button }).first();
      if (await onToast.isVisible().catch(() => false)) {
        try {
          await onToast.click({ timeout: 3000 });
          return;
        } catch { /* hidden meanwhile: look in the centre */ }
      }
      await this.palette('Notifications: Show Notifications');
      const centre = this.page.locator('.notifications-center');
      await centre.waitFor({ state: 'visible', timeout: 10000 });
      const item = centre.locator('.notification-list-item', { hasText: text }).first();
      if ((await item.count()) > 0) {
        // An item's buttons show on the expanded or focused item.
        await item.click();
        const inCentre = item.locator('.monaco-button', { hasText: button }).first();
        if (await inCentre.isVisible().catch(() => false)) {
          await inCentre.click();
          await this.palette('Notifications: Hide Notifications');
          return;
        }
      }
      await this.palette('Notifications: Hide Notifications');
      if (Date.now() > deadline) throw new Error(`no "${button}" on a notification saying "${text}" within ${timeout} ms`);
      await this.page.waitForTimeout(500);
    }
  }

  /** The side bar showing the Hydra view (the activity bar item toggles it: clicked only to open it). */
  async hydraView() {
    const sidebar = this.page.locator('.part.sidebar');
    if (!(await sidebar.isVisible()) || !/Hydra/i.test(await sidebar.locator('.composite.title').innerText())) {
      await this.page.locator('.activitybar [aria-label^="Hydra"]').first().click();
    }
    await sidebar.locator('.composite.title', { hasText: /Hydra/i }).waitFor({ timeout: 15000 });
    return sidebar;
  }

  /** Clicks the inline button `label` of a tree row, as a user does: it shows when the pointer is on the row. */
  async inline(row, label) {
    await row.hover();
    const button = row.locator(`.actions .action-label[aria-label="${label}"]`).first();
    await button.waitFor({ state: 'visible', timeout: 10000 });
    await button.click();
  }

  /** Clicks the button `label` of the Hydra view's title bar (it shows when the pointer is on the view). */
  async viewTitleAction(label) {
    const sidebar = await this.hydraView();
    await sidebar.hover();
    const button = sidebar.locator(`.title-actions .action-label[aria-label="${label}"], .actions .action-label[aria-label="${label}"]`).first();
    await button.waitFor({ state: 'visible', timeout: 10000 });
    await button.click();
  }

  /**
   * The modal dialog on screen: its text, its severity (the icon's codicon:
   * info, warning, error), its buttons and the primary one (where Enter lands).
   */
  async dialog() {
    const box = this.page.locator('.monaco-dialog-box');
    await box.waitFor({ timeout: 20000 });
    const icon = await box.locator('.dialog-icon').first().getAttribute('class');
    const buttons = (await box.locator('.dialog-buttons .monaco-button').allInnerTexts()).map((t) => t.trim());
    const primary = (await box.locator('.dialog-buttons .monaco-button:not(.secondary)').allInnerTexts()).map((t) => t.trim());
    return {
      box,
      text: (await box.innerText()).replace(/\n+/g, ' | '),
      severity: /codicon-(?:dialog-)?(info|warning|error)\b/.exec(icon ?? '')?.[1] ?? icon,
      buttons,
      primary,
      /** Clicks the button `label` and waits for the dialog to go. */
      press: async (label) => {
        await box.locator('.dialog-buttons .monaco-button', { hasText: new RegExp(`^${label}$`) }).click();
        await box.waitFor({ state: 'hidden', timeout: 10000 });
      },
    };
  }

  /**
   * Runs `label` from a tree row's context menu: a right click, then the
   * keyboard (VS Code's menus take the keys as a user gives them; a synthetic
   * click on an item does not reach them).
   */
  async contextMenu(row, label) {
    await row.click({ button: 'right' });
    const menu = this.page.locator('.context-view .monaco-menu').first();
    await menu.locator('.action-label', { hasText: label }).first().waitFor({ state: 'visible', timeout: 10000 });
    for (let i = 0; i < 30; i++) {
      await this.page.keyboard.press('ArrowDown');
      // The item's label, without the keybinding shown beside it.
      if ((await menu.locator('.action-item.focused .action-label').first().innerText().catch(() => '')).trim() === label) break;
    }
    await this.page.keyboard.press('Enter');
  }

  /**
   * What VS Code's API says now, as the probe extension last wrote it:
   * `diagnostics` (vscode.languages.getDiagnostics(), by file path: each
   * {line, character, endLine, severity, source, message}, 0-based) and
   * `activeTab` ({kind: 'diff', label, original, modified, originalText,
   * modifiedText} for a diff editor) and `terminals` (the open terminals' names).
   */
  probe() {
    if (!fs.existsSync(this.probeFile)) throw new Error('the probe extension has written nothing (is HYDRA_PROBE_VSIX set?)');
    return JSON.parse(fs.readFileSync(this.probeFile, 'utf8'));
  }

  /** Waits until `test(probe())` holds; answers what it returned. */
  async waitProbe(test, what, ms = 20000) {
    return waitFor(async () => test(this.probe()), ms, what);
  }

  /** The title of the active editor tab. */
  async activeTab() {
    return (await this.page.locator('.tabs-container .tab.active').first().innerText()).trim();
  }

  /** Waits for the active editor tab's title to match `pattern`; answers it. */
  async waitActiveTab(pattern, what) {
    return waitFor(async () => {
      const title = await this.activeTab();
      return pattern.test(title) ? title : undefined;
    }, 20000, what);
  }

  /** The visible notification toasts holding `text`. */
  async toastCount(text) {
    return this.page.locator('.notification-toast', { hasText: text }).count();
  }

  /** Closes chromium and stops code-server's process group (started here): SIGTERM, then SIGKILL after 5 s. */
  async close() {
    await this.browser?.close().catch(() => undefined);
    if (!this.server) return;
    const exited = new Promise((r) => (this.server.exitCode !== null ? r() : this.server.once('exit', r)));
    try { process.kill(-this.server.pid, 'SIGTERM'); } catch { /* already gone */ }
    const how = await Promise.race([exited.then(() => 'exit'), new Promise((r) => setTimeout(() => r('timeout'), 5000))]);
    if (how === 'timeout') { try { process.kill(-this.server.pid, 'SIGKILL'); } catch { /* already gone */ } }
  }
}
