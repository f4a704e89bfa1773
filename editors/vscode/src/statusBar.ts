// A status bar item while races run; it opens the Hydra view.
import * as vscode from 'vscode';
import type { HydraSession } from './session';

export function activate(context: vscode.ExtensionContext, session: HydraSession): void {
  const item = vscode.window.createStatusBarItem('hydra.status', vscode.StatusBarAlignment.Left, 10);
  item.name = 'Hydra';
  item.command = 'hydra.races.focus';
  const update = () => {
    const running = session.store.running();
    if (running.length === 0) {
      item.hide();
      return;
    }
    const agents = running.flatMap((r) => r.agents);
    const done = agents.filter((a) => a.state !== 'queued' && a.state !== 'running').length;
    const scoring = running.some((r) => r.state === 'scoring');
    item.text = `$(sync~spin) Hydra: ${scoring ? 'scoring' : `${done}/${agents.length} agents done`}`;
    item.tooltip = running.map((r) => `${r.raceId}: ${r.task}`).join('\n');
    item.show();
  };
  context.subscriptions.push(item, session.store.onDidChange(update));
}
