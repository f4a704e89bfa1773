// A collaboration's rows in the Hydra view: the collaboration (what it does
// now, or why it stopped and its best iteration) -> its iterations (score,
// the breakdown in the tooltip, the review's first line, a star for the
// best, a merge icon for the one merged) -> each iteration's review and
// changed files; then its two agents, for their output.
import * as vscode from 'vscode';
import type { RaceStore } from './raceStore';
import {
  NO_GOOD_ROUND, agentStateIcon, agentTooltip, formatElapsed, mergedDetail, mergedText, plainState, raceIsActive, visibleControls,
} from './format';
import {
  type IterationContext, type IterationRow, collabDescription, collabTooltip, iterationDescription, iterationRows, iterationTooltip,
  reviewFirstLine,
} from './collabModel';
import { firstLine, shortIdOf } from './pick';
import { raceRowDescription } from './raceLabel';
import type { AgentStateName } from './protocol';

/** The iteration rows of a collaboration, with the one in progress. */
export function rowsOf(store: RaceStore, raceId: string): IterationRow[] {
  const race = store.get(raceId);
  return race ? iterationRows(race, store.phaseOf(raceId)) : [];
}

export function collabItem(store: RaceStore, raceId: string): vscode.TreeItem {
  const race = store.get(raceId);
  const active = race ? raceIsActive(race.state) : false;
  const noWinner = !active && store.allFailedIn(raceId);
  const merged = race?.merged;
  const item = new vscode.TreeItem(firstLine(race?.task ?? raceId),
    active ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
  item.id = raceId;
  const described = race ? collabDescription(race, store.phaseOf(raceId), store.recordedWinnerOf(raceId)) : 'collab';
  // Its best iteration is in `described` already.
  item.description = race ? raceRowDescription(race, { state: described, allFailed: noWinner, collab: true, shortId: shortIdOf(store, raceId) }, new Date())
    : described;
  item.tooltip = [race ? collabTooltip(race) : undefined, `collaboration ${raceId}`, merged ? `${mergedText(merged)} (${mergedDetail(merged)})` : noWinner ? NO_GOOD_ROUND : undefined]
    .filter((l) => l).join('\n');
  item.iconPath = merged ? new vscode.ThemeIcon('git-merge', new vscode.ThemeColor('charts.purple'))
    : new vscode.ThemeIcon(active ? 'sync~spin' : noWinner ? 'error' : race?.state === 'completed' ? 'pass-filled' : 'history');
  // As a race's: a merged collaboration, or one without a winner, offers no merge.
  item.contextValue = active ? 'collab.running' : merged ? 'collab.merged' : noWinner ? 'collab.noWinner'
    : race?.state === 'completed' ? 'collab.finished' : 'collab.other';
  return item;
}

function contextOf(store: RaceStore, raceId: string, row: IterationRow): IterationContext {
  const race = store.get(raceId);
  const last = Math.max(0, ...(race?.iterations ?? []).map((i) => i.iteration));
  return {
    collaboration: race?.collaboration,
    winner: store.recordedWinnerOf(raceId),
    merged: race?.merged,
    ranking: store.rankingOf(raceId, row.agentId),
    last: row.iteration === last,
  };
}

const AGENT_STATES = new Set<string>(['queued', 'running', 'completed', 'failed', 'timedOut', 'cancelled', 'interrupted', 'setupFailed']);

export function iterationItem(store: RaceStore, raceId: string, row: IterationRow): vscode.TreeItem {
  const ctx = contextOf(store, raceId, row);
  const s = row.summary;
  // An iteration has a review and files to show once it is recorded.
  const item = new vscode.TreeItem(row.agentId,
    s ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
  item.id = `${raceId}/${row.agentId}`;
  item.description = iterationDescription(row, ctx);
  item.tooltip = iterationTooltip(row, ctx);
  const isMerged = ctx.merged?.agentId === row.agentId;
  const isWinner = ctx.winner === row.agentId;
  const builderState = s && AGENT_STATES.has(s.builderStatus) ? s.builderStatus as AgentStateName : 'completed';
  item.iconPath = row.phase ? new vscode.ThemeIcon('sync~spin')
    : isMerged ? new vscode.ThemeIcon('git-merge', new vscode.ThemeColor('charts.purple'))
      : isWinner ? new vscode.ThemeIcon('star-full', new vscode.ThemeColor('charts.yellow'))
        : new vscode.ThemeIcon(agentStateIcon(builderState));
  // Which buttons it gets: diff once it has a result, merge once the collaboration is over and it
  // could win (hydra merges nothing of a running one), its review when it has one.
  const active = raceIsActive(store.get(raceId)?.state ?? 'completed');
  const cannotWin = ctx.ranking?.eligible === false || (s !== undefined && s.builderStatus !== 'completed');
  const base = !s || row.phase ? 'iteration.running' : isMerged ? 'iteration.merged' : cannotWin ? 'iteration.ineligible'
    : active ? 'iteration.active' : ctx.merged ? 'iteration.notMerged' : 'iteration';
  item.contextValue = `${base}${s?.review !== undefined ? '+review' : ''}`;
  return item;
}

export function reviewItem(store: RaceStore, raceId: string, iteration: number, agentId: string): vscode.TreeItem {
  const race = store.get(raceId);
  const s = race?.iterations?.find((i) => i.iteration === iteration);
  const item = new vscode.TreeItem('review', vscode.TreeItemCollapsibleState.None);
  item.id = `${raceId}/${agentId}#review`;
  const reviewer = race?.collaboration?.reviewer;
  item.description = visibleControls(`${s?.approved ? 'approved · ' : ''}${reviewFirstLine(s?.review) ?? ''}`);
  const tooltip = new vscode.MarkdownString(undefined, false);
  tooltip.appendText(`Review of ${agentId}${reviewer ? ` by ${reviewer}` : ''}${s?.approved ? ' (approved)' : ''}\n\n`);
  tooltip.appendMarkdown(visibleControls(s?.review ?? ''));
  item.tooltip = tooltip;
  item.iconPath = new vscode.ThemeIcon(s?.approved ? 'pass' : 'comment');
  item.contextValue = 'review';
  item.command = { command: 'hydra.showReview', title: 'Show Review', arguments: [{ raceId, agentId }] };
  return item;
}

/** The builder or the reviewer: its state now (its latest run), for its output. */
export function collabAgentItem(store: RaceStore, raceId: string, agentId: string): vscode.TreeItem {
  const race = store.get(raceId);
  const agent = race?.agents.find((a) => a.agentId === agentId);
  const state = agent?.state ?? 'queued';
  const item = new vscode.TreeItem(agentId, vscode.TreeItemCollapsibleState.None);
  item.id = `${raceId}/${agentId}`;
  const parts = [agent?.agent, plainState(state)];
  if (state !== 'queued' && state !== 'notNeeded') parts.push(formatElapsed(store.elapsedMs(raceId, agentId)));
  item.description = parts.filter((p) => p).join(' · ');
  item.tooltip = agentTooltip(agent, undefined);
  item.iconPath = new vscode.ThemeIcon(agentStateIcon(state));
  item.contextValue = state === 'running' ? 'collabAgent.running' : 'collabAgent';
  return item;
}
