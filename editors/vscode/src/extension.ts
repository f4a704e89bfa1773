// Entry point: one hydra session, then each feature wires itself up.
import * as vscode from 'vscode';
import { HydraSession } from './session';
import * as collab from './collab';
import * as diagnostics from './diagnostics';
import * as diff from './diff';
import * as evaluation from './eval';
import * as merge from './merge';
import * as output from './output';
import * as outputTerminals from './outputTerminals';
import * as races from './races';
import * as scoreboard from './scoreboard';
import * as statusBar from './statusBar';
import * as take from './take';
import * as view from './view';

let session: HydraSession | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel('Hydra');
  session = new HydraSession(log);
  context.subscriptions.push(log, session);
  for (const feature of [races, collab, view, output, outputTerminals, diff, take, merge, scoreboard, evaluation, statusBar, diagnostics]) feature.activate(context, session);

  const s = session;
  context.subscriptions.push(
    // hydra.toml runs commands: the server starts only once the workspace is trusted.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void s.ensureStarted()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('hydra.serverPath') || e.affectsConfiguration('hydra.logLevel')) void s.restart();
    }),
  );
  if (vscode.workspace.isTrusted) await s.ensureStarted();
}

export async function deactivate(): Promise<void> {
  const s = session;
  session = undefined;
  await s?.stop();
}
