// A status bar item while races run; it opens the Hydra view.
import * as vscode from 'vscode';
import type { HydraSession } from './session';
import { isCollab, phaseText } from './collabModel';

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
    // A collaboration says its phase; races count their agents done.
    const races = running.filter((r) => !isCollab(r));
    const agents = races.flatMap((r) => r.agents);
    const done = agents.filter((a) => a.state !== 'queued' && a.state !== 'running').length;
    const scoring = races.some((r) => r.state === 'scoring');
    const phases = running.filter((r) => isCollab(r)).map((r) => {
      const phase = session.store.phaseOf(r.raceId);
      return phase ? phaseText(phase) : 'collaborating';
    });
    const parts = [...(races.length > 0 ? [scoring ? 'scoring' : `${done}/${agents.length} agents done`] : []), ...phases];
    item.text = `$(sync~spin) Hydra: ${parts.join(' · ')}`;
    item.tooltip = running.map((r) => `${r.raceId}: ${r.task}`).join('\n');
    item.show();
  };
  context.subscriptions.push(item, session.store.onDidChange(update));
}
