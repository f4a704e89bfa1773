// The scoreboard: a webview of hydra/scores, one panel per race. It opens by
// itself when a race this session started has been scored, without taking the
// keyboard from whatever the user is typing into (a quick pick would close).
// A panel open when its race is merged (from here, the view, the terminal or
// auto_merge, as the race store learns it) is drawn again as merged.
import * as vscode from 'vscode';
import { randomBytes } from 'crypto';
import * as proto from './protocol';
import type { HydraSession } from './session';
import { raceIsActive } from './format';
import { confirmAndMerge } from './merge';
import { pickRace, targetOf } from './pick';
import { type AgentNotes, renderScoreboard } from './scoreboardHtml';

interface Board {
  panel: vscode.WebviewPanel;
  scores: proto.ScoresResult;
  /** The agent the page shows as merged, if any. */
  merged: string | undefined;
}

class Scoreboards implements vscode.Disposable {
  private readonly boards = new Map<string, Board>();

  constructor(private readonly session: HydraSession) {}

  /** `preserveFocus`: shown, but the keyboard stays where it is (a race that ended by itself). */
  async show(raceId: string, preserveFocus = false): Promise<void> {
    const scores = await this.session.request(proto.scores, { raceId });
    if (!scores) return;
    this.session.store.setScores(raceId, scores);
    const board = this.boards.get(raceId) ?? this.create(raceId, scores, preserveFocus);
    board.scores = scores;
    this.render(raceId, board);
    board.panel.reveal(vscode.ViewColumn.Active, preserveFocus);
  }

  /** Draws again the open boards whose race was merged since they were drawn. */
  mergesChanged(): void {
    for (const [raceId, board] of this.boards) {
      if (this.session.store.mergedOf(raceId)?.agentId !== board.merged) this.render(raceId, board);
    }
  }

  private render(raceId: string, board: Board): void {
    const race = this.session.store.get(raceId);
    const agents: Record<string, AgentNotes> = {};
    for (const a of race?.agents ?? []) {
      agents[a.agentId] = { error: a.error, warnings: a.warnings, stderrTail: a.stderrTail, deniedToolCalls: a.deniedToolCalls };
    }
    const merged = race?.merged;
    board.merged = merged?.agentId;
    board.panel.webview.html = renderScoreboard(board.scores, {
      cspSource: board.panel.webview.cspSource,
      nonce: randomBytes(16).toString('base64'),
      task: race?.task,
      agents,
      merged,
    });
  }

  dispose(): void {
    for (const b of this.boards.values()) b.panel.dispose();
  }

  private create(raceId: string, scores: proto.ScoresResult, preserveFocus: boolean): Board {
    const showOptions = { viewColumn: vscode.ViewColumn.Active, preserveFocus };
    const panel = vscode.window.createWebviewPanel('hydra.scoreboard', `Hydra scoreboard ${raceId}`, showOptions, {
      enableScripts: true,
      localResourceRoots: [],
    });
    const board: Board = { panel, scores, merged: undefined };
    this.boards.set(raceId, board);
    panel.onDidDispose(() => this.boards.delete(raceId));
    panel.webview.onDidReceiveMessage(async (message: { type?: string; agentId?: string }) => {
      if (typeof message.agentId !== 'string') return;
      if (message.type === 'merge') await confirmAndMerge(this.session, raceId, message.agentId);
      if (message.type === 'diff') await vscode.commands.executeCommand('hydra.showDiff', { raceId, agentId: message.agentId });
      if (message.type === 'allChanges') await vscode.commands.executeCommand('hydra.showAllChanges', { raceId, agentId: message.agentId });
    });
    return board;
  }
}

export function activate(context: vscode.ExtensionContext, session: HydraSession): void {
  const boards = new Scoreboards(session);
  context.subscriptions.push(
    boards,
    session.store.onDidChange(() => boards.mergesChanged()),
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
