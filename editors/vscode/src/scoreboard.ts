// The scoreboard: a webview of hydra/scores, one panel per race. It opens by
// itself when a race this session started has been scored, without taking the
// keyboard from whatever the user is typing into (a quick pick would close).
import * as vscode from 'vscode';
import { randomBytes } from 'crypto';
import * as proto from './protocol';
import type { HydraSession } from './session';
import { raceIsActive } from './format';
import { confirmAndMerge } from './merge';
import { pickRace, targetOf } from './pick';
import { type AgentNotes, renderScoreboard } from './scoreboardHtml';

class Scoreboards implements vscode.Disposable {
  private readonly panels = new Map<string, vscode.WebviewPanel>();

  constructor(private readonly session: HydraSession) {}

  /** `preserveFocus`: shown, but the keyboard stays where it is (a race that ended by itself). */
  async show(raceId: string, preserveFocus = false): Promise<void> {
    const scores = await this.session.request(proto.scores, { raceId });
    if (!scores) return;
    this.session.store.setScores(raceId, scores);
    const race = this.session.store.get(raceId);
    const agents: Record<string, AgentNotes> = {};
    for (const a of race?.agents ?? []) {
      agents[a.agentId] = { error: a.error, warnings: a.warnings, stderrTail: a.stderrTail, deniedToolCalls: a.deniedToolCalls };
    }
    const panel = this.panels.get(raceId) ?? this.create(raceId, preserveFocus);
    panel.webview.html = renderScoreboard(scores, {
      cspSource: panel.webview.cspSource,
      nonce: randomBytes(16).toString('base64'),
      task: race?.task,
      agents,
    });
    panel.reveal(vscode.ViewColumn.Active, preserveFocus);
  }

  dispose(): void {
    for (const p of this.panels.values()) p.dispose();
  }

  private create(raceId: string, preserveFocus: boolean): vscode.WebviewPanel {
    const showOptions = { viewColumn: vscode.ViewColumn.Active, preserveFocus };
    const panel = vscode.window.createWebviewPanel('hydra.scoreboard', `Hydra scoreboard ${raceId}`, showOptions, {
      enableScripts: true,
      localResourceRoots: [],
    });
    this.panels.set(raceId, panel);
    panel.onDidDispose(() => this.panels.delete(raceId));
    panel.webview.onDidReceiveMessage(async (message: { type?: string; agentId?: string }) => {
      if (typeof message.agentId !== 'string') return;
      if (message.type === 'merge') await confirmAndMerge(this.session, raceId, message.agentId);
      if (message.type === 'diff') await vscode.commands.executeCommand('hydra.showDiff', { raceId, agentId: message.agentId });
    });
    return panel;
  }
}

export function activate(context: vscode.ExtensionContext, session: HydraSession): void {
  const boards = new Scoreboards(session);
  context.subscriptions.push(
    boards,
    session.onRaceFinished.event((p) => {
      if (p.rankings.length > 0) void boards.show(p.raceId, true);
    }),
    vscode.commands.registerCommand('hydra.showScoreboard', async (arg?: unknown) => {
      const raceId = targetOf(arg)?.raceId ??
        (await pickRace(session, 'The race whose scores to show', (r) => !raceIsActive(r.state)))?.raceId;
      if (raceId) await boards.show(raceId);
    }),
  );
}
