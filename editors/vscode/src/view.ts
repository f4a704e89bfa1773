// The "Hydra" view: races -> agents by rank (state icon, elapsed time, rank
// and score, a star for the winner) -> changed files. A file opens VS Code's
// diff editor; inline actions diff, merge, show output and cancel. A merged
// race, and the agent merged, say so and offer no merge. A collaboration
// lists its iterations instead (collabView.ts), each with its review and files.
import * as vscode from 'vscode';
import * as proto from './protocol';
import type { HydraSession } from './session';
import {
  ALL_FAILED, agentStateIcon, agentTooltip, autoMergeLabel, deniedText, formatElapsed, ineligibleLabel, mergedDetail, mergedText,
  plainState, raceIsActive, rankOrder, visibleControls,
} from './format';
import { firstLine, shortIdOf, Target } from './pick';
import { raceRowDescription } from './raceLabel';
import { isCollab } from './collabModel';
import { collabAgentItem, collabItem, iterationItem, reviewItem, rowsOf } from './collabView';

type Node = RaceNode | AgentNode | FileNode | IterationNode | ReviewNode;

class RaceNode implements Target {
  readonly kind = 'race';
  constructor(readonly raceId: string) {}
}
class AgentNode implements Target {
  readonly kind = 'agent';
  constructor(readonly raceId: string, readonly agentId: string) {}
}
/** A collaboration's iteration N: agentId "builder@N". */
class IterationNode implements Target {
  readonly kind = 'iteration';
  constructor(readonly raceId: string, readonly agentId: string, readonly iteration: number) {}
}
/** An iteration's review; it opens as a Markdown document. */
class ReviewNode implements Target {
  readonly kind = 'review';
  constructor(readonly raceId: string, readonly agentId: string, readonly iteration: number) {}
}
class FileNode implements Target {
  readonly kind = 'file';
  constructor(readonly raceId: string, readonly agentId: string, readonly path: string, readonly change: proto.FileChange) {}
}

class RaceTreeProvider implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | Node[] | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  // One node per race, agent and file, kept across refreshes: an inline
  // button hands its command the node of its row, which must still be there.
  private readonly nodes = new Map<string, Node>();
  // Changed files of finished agents: a result commit never changes.
  private readonly files = new Map<string, proto.FileChange[]>();
  // Races whose scores were asked for, so that a race hydra cannot score is asked once.
  private readonly scoresAsked = new Set<string>();

  constructor(private readonly session: HydraSession) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  /**
   * Redraws the rows of the agents still running (their elapsed time), and
   * only them: refreshing the whole tree every second would drop and remake
   * every row, and a button clicked meanwhile would reach its command
   * without its row.
   */
  tick(): void {
    const rows = this.session.store.running().flatMap((r) => r.agents
      .filter((a) => a.state === 'running')
      .map((a) => this.nodes.get(`agent:${r.raceId}/${a.agentId}`))
      .filter((n): n is Node => n !== undefined));
    if (rows.length > 0) this.changed.fire(rows);
  }

  async getChildren(node?: Node): Promise<Node[]> {
    const store = this.session.store;
    if (!node) return store.list().map((r) => this.node(`race:${r.raceId}`, () => new RaceNode(r.raceId)));
    if (node.kind === 'race' && isCollab(store.get(node.raceId))) {
      await this.ensureRankings(node.raceId);
      const iterations = rowsOf(store, node.raceId).map((row) => this.node(`iteration:${node.raceId}/${row.iteration}`,
        () => new IterationNode(node.raceId, row.agentId, row.iteration)));
      const agents = (store.get(node.raceId)?.agents ?? []).map((a) =>
        this.node(`agent:${node.raceId}/${a.agentId}`, () => new AgentNode(node.raceId, a.agentId)));
      return [...iterations, ...agents];
    }
    if (node.kind === 'iteration') {
      const summary = store.get(node.raceId)?.iterations?.find((i) => i.iteration === node.iteration);
      if (!summary) return [];
      const review = summary.review !== undefined
        ? [this.node(`review:${node.raceId}/${node.iteration}`, () => new ReviewNode(node.raceId, node.agentId, node.iteration))] : [];
      const changes = await this.changesOf(node.raceId, node.agentId);
      return [...review, ...changes.map((c) =>
        this.node(`file:${node.raceId}/${node.agentId}/${c.path}`, () => new FileNode(node.raceId, node.agentId, c.path, c)))];
    }
    if (node.kind === 'race') {
      await this.ensureRankings(node.raceId);
      const ids = (store.get(node.raceId)?.agents ?? []).map((a) => a.agentId);
      return rankOrder(ids, (id) => store.rankingOf(node.raceId, id)?.rank)
        .map((id) => this.node(`agent:${node.raceId}/${id}`, () => new AgentNode(node.raceId, id)));
    }
    if (node.kind === 'agent') {
      const changes = await this.changesOf(node.raceId, node.agentId);
      return changes.map((c) =>
        this.node(`file:${node.raceId}/${node.agentId}/${c.path}`, () => new FileNode(node.raceId, node.agentId, c.path, c)));
    }
    return [];
  }

  private node<T extends Node>(key: string, make: () => T): T {
    let node = this.nodes.get(key) as T | undefined;
    if (!node) {
      node = make();
      this.nodes.set(key, node);
    }
    return node;
  }

  getTreeItem(node: Node): vscode.TreeItem {
    const store = this.session.store;
    const collab = node.kind !== 'file' && isCollab(store.get(node.raceId));
    if (node.kind === 'race') return collab ? collabItem(store, node.raceId) : this.raceItem(node);
    if (node.kind === 'agent') return collab ? collabAgentItem(store, node.raceId, node.agentId) : this.agentItem(node);
    if (node.kind === 'iteration') {
      const row = rowsOf(store, node.raceId).find((r) => r.iteration === node.iteration);
      return iterationItem(store, node.raceId, row ?? { iteration: node.iteration, agentId: node.agentId });
    }
    if (node.kind === 'review') return reviewItem(store, node.raceId, node.iteration, node.agentId);
    return fileItem(node);
  }

  private raceItem(node: RaceNode): vscode.TreeItem {
    const race = this.session.store.get(node.raceId);
    const active = race ? raceIsActive(race.state) : false;
    // A race in which every agent failed has no winner to merge (when none completed, its state is failed).
    const noWinner = !active && this.session.store.allFailedIn(node.raceId);
    const merged = race?.merged;
    const item = new vscode.TreeItem(firstLine(race?.task ?? node.raceId),
      active ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
    item.id = node.raceId;
    item.description = race ? raceRowDescription(race, {
      state: race.state, winner: this.session.store.recordedWinnerOf(node.raceId), allFailed: noWinner,
      shortId: shortIdOf(this.session.store, node.raceId),
    }, new Date()) : node.raceId;
    item.tooltip = [race?.task, `race ${node.raceId}`, merged ? `${mergedText(merged)} (${mergedDetail(merged)})` : noWinner ? ALL_FAILED : undefined]
      .filter((l) => l).join('\n');
    item.iconPath = merged ? new vscode.ThemeIcon('git-merge', new vscode.ThemeColor('charts.purple'))
      : new vscode.ThemeIcon(active ? 'sync~spin' : noWinner ? 'error' : race?.state === 'completed' ? 'pass-filled' : 'history');
    // A merged race offers no merge: hydra would refuse it.
    item.contextValue = active ? 'race.running' : merged ? 'race.merged' : noWinner ? 'race.noWinner'
      : race?.state === 'completed' ? 'race.finished' : 'race.other';
    return item;
  }

  private agentItem(node: AgentNode): vscode.TreeItem {
    const store = this.session.store;
    const race = store.get(node.raceId);
    const agent = race?.agents.find((a) => a.agentId === node.agentId);
    const merged = race?.merged;
    const isMerged = merged?.agentId === node.agentId;
    const state = agent?.state ?? 'queued';
    const finished = state !== 'queued' && state !== 'running' && state !== 'notNeeded';
    const item = new vscode.TreeItem(node.agentId,
      finished ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    item.id = `${node.raceId}/${node.agentId}`;
    const ranking = store.rankingOf(node.raceId, node.agentId);
    const cannotWin = ineligibleLabel(ranking);
    const isWinner = ranking !== undefined && store.winnerOf(node.raceId) === node.agentId;
    const parts: string[] = [plainState(state), formatElapsed(store.elapsedMs(node.raceId, node.agentId))];
    if (ranking) parts.push(`#${ranking.rank} · ${ranking.total.toFixed(1)}${isWinner ? ' · winner' : ''}`);
    if (isMerged) parts.push(`merged into ${merged.targetBranch || 'your branch'}`);
    if (cannotWin) parts.push(cannotWin);
    // Flagged: it may win, but hydra would not merge it by itself (the tooltip says why).
    // Before the race is scored, its denied tool calls are what will flag it.
    else if (autoMergeLabel(ranking) || (!ranking && deniedText(agent?.deniedToolCalls))) parts.push('⚠ not for auto-merge');
    item.description = parts.join(' · ');
    const tooltip = agentTooltip(agent, ranking);
    item.tooltip = isMerged ? `${mergedText(merged)} (${mergedDetail(merged)})\n${tooltip}` : tooltip;
    // The agent merged wears the merge icon, the winner a star instead of its state's icon (it completed).
    item.iconPath = isMerged
      ? new vscode.ThemeIcon('git-merge', new vscode.ThemeColor('charts.purple'))
      : isWinner
        ? new vscode.ThemeIcon('star-full', new vscode.ThemeColor('charts.yellow'))
        : new vscode.ThemeIcon(agentStateIcon(state));
    // An agent that cannot win is never offered for merging, nor any agent of a merged race.
    item.contextValue = !finished ? 'agent.running' : isMerged ? 'agent.merged' : cannotWin ? 'agent.ineligible'
      : merged ? 'agent.notMerged' : 'agent';
    return item;
  }

  /** A finished race from the history has no rankings yet: they are its scores'. */
  private async ensureRankings(raceId: string): Promise<void> {
    const race = this.session.store.get(raceId);
    // A race in which no agent completed is failed, and scored too.
    const scored = race?.state === 'completed' || race?.state === 'failed';
    if (!race || !scored || this.session.store.hasRankings(raceId) || this.scoresAsked.has(raceId)) return;
    this.scoresAsked.add(raceId);
    try {
      const scores = await this.session.requestOrThrow(proto.scores, { raceId });
      this.session.store.setScores(raceId, scores);
    } catch {
      // A race hydra did not score (NotScored) keeps hydra's order.
    }
  }

  private async changesOf(raceId: string, agentId: string): Promise<proto.FileChange[]> {
    const key = `${raceId}/${agentId}`;
    const cached = this.files.get(key);
    if (cached) return cached;
    try {
      const result = await this.session.requestOrThrow(proto.diff, { raceId, agentId });
      this.files.set(key, result.files);
      return result.files;
    } catch {
      // An agent without a result commit (NoResult) simply has no files to show.
      return [];
    }
  }
}

function fileItem(node: FileNode): vscode.TreeItem {
  const item = new vscode.TreeItem(vscode.Uri.file(`/${node.path}`), vscode.TreeItemCollapsibleState.None);
  item.id = `${node.raceId}/${node.agentId}/${node.path}`;
  // An agent names its files: their control characters are shown, never passed on.
  item.label = visibleControls(node.path.split('/').pop() ?? node.path);
  const dir = node.path.includes('/') ? node.path.slice(0, node.path.lastIndexOf('/')) : '';
  item.description = visibleControls(`${node.change.status} +${node.change.additions} −${node.change.deletions}${dir ? ' · ' + dir : ''}`);
  item.tooltip = visibleControls(node.change.oldPath ? `${node.change.oldPath} → ${node.path}` : node.path);
  item.contextValue = 'file';
  item.command = { command: 'hydra.showDiff', title: 'Show Diff', arguments: [node] };
  return item;
}

export function activate(context: vscode.ExtensionContext, session: HydraSession): void {
  const provider = new RaceTreeProvider(session);
  const view = vscode.window.createTreeView('hydra.races', { treeDataProvider: provider, showCollapseAll: true });
  // Elapsed times tick while a race runs.
  const ticker = setInterval(() => provider.tick(), 1000);
  context.subscriptions.push(
    view,
    { dispose: () => clearInterval(ticker) },
    session.store.onDidChange(() => provider.refresh()),
    // A finished race's agents now have result commits: fetch their summaries.
    session.onRaceFinished.event((p) => void session.request(proto.status, { raceId: p.raceId }).then((r) => {
      if (r) session.store.setSummaries(r.races);
    })),
    vscode.commands.registerCommand('hydra.refresh', () => session.refresh()),
  );
}
