// Choosing what a command acts on: the tree item it was invoked on, or, from
// the command palette, a race and an agent picked from quick picks. A
// collaboration's results are its iterations ("builder@N"): what to diff,
// compare or merge is picked among them.
import * as vscode from 'vscode';
import type { AgentState, RaceSummary } from './protocol';
import type { HydraSession } from './session';
import { agentPickDescription, byRank, raceIsActive } from './format';
import * as proto from './protocol';
import type { RaceStore } from './raceStore';
import { raceRowDescription, shortIds } from './raceLabel';
import { executorItems } from './executorPick';
import { isCollab, iterationAgents, iterationOf, iterationPickDescription } from './collabModel';

/** What a command acts on. Tree items and the scoreboard pass one. */
export interface Target {
  raceId: string;
  agentId?: string;
  path?: string;
}

export function targetOf(arg: unknown): Target | undefined {
  if (typeof arg !== 'object' || arg === null) return undefined;
  const t = arg as Partial<Target>;
  return typeof t.raceId === 'string' ? { raceId: t.raceId, agentId: t.agentId, path: t.path } : undefined;
}

/** A race, newest first; `filter` narrows the choice, and `none` says why none is left. */
export async function pickRace(
  session: HydraSession, placeHolder: string, filter: (r: RaceSummary) => boolean = () => true, none = 'no race to choose from',
): Promise<RaceSummary | undefined> {
  await session.refresh();
  const races = session.store.list().filter(filter);
  if (races.length === 0) {
    void vscode.window.showInformationMessage(`Hydra: ${session.store.list().length === 0 ? 'no race yet' : none}.`);
    return undefined;
  }
  const shorts = shortIds(session.store.list().map((r) => r.raceId));
  const picked = await vscode.window.showQuickPick(
    races.map((r) => raceItem(session.store, r, shorts)),
    { placeHolder, matchOnDescription: true, matchOnDetail: true },
  );
  return picked?.race;
}

/** The short id of a race the store lists (raceLabel.ts). */
export function shortIdOf(store: RaceStore, raceId: string): string {
  return shortIds([raceId, ...store.list().map((r) => r.raceId)]).get(raceId) ?? raceId;
}

/**
 * A race as a quick pick item: its task, then what tells it from the others
 * of the same task (start time, winner, short id); the full id is its
 * detail, so that typing any part of the id finds it.
 */
export function raceItem(store: RaceStore, r: RaceSummary, shorts: Map<string, string>, collabNote = false)
  : vscode.QuickPickItem & { race: RaceSummary } {
  const state = `${collabNote && isCollab(r) ? 'collab · ' : ''}${r.state}`;
  const winner = store.recordedWinnerOf(r.raceId);
  return {
    label: firstLine(r.task),
    description: raceRowDescription(r, {
      state, winner, allFailed: store.allFailedIn(r.raceId) && !raceIsActive(r.state), collab: isCollab(r),
      shortId: shorts.get(r.raceId) ?? r.raceId,
    }, new Date()),
    detail: r.raceId,
    race: r,
  };
}

/**
 * A scored race's rankings, asked of hydra once when the store has none (a
 * race from the history), so that its agents can be listed by rank. A race
 * hydra cannot score keeps hydra's order.
 */
export async function ensureRankings(session: HydraSession, race: RaceSummary): Promise<void> {
  const scored = race.state === 'completed' || race.state === 'failed';
  if (!scored || session.store.hasRankings(race.raceId)) return;
  try {
    session.store.setScores(race.raceId, await session.requestOrThrow(proto.scores, { raceId: race.raceId }));
  } catch {
    // NotScored: no ranks to list them by.
  }
}

/** An agent of `race`, among `agents` (default: all of them), best ranked first, unranked ones after. */
export async function pickAgent(
  session: HydraSession, race: RaceSummary, placeHolder: string, agents: AgentState[] = race.agents,
): Promise<AgentState | undefined> {
  if (agents.length === 1) return agents[0];
  const store = session.store;
  await ensureRankings(session, race);
  const picked = await vscode.window.showQuickPick(
    byRank(agents, (id) => store.rankingOf(race.raceId, id)?.rank).map((a) => ({
      label: a.agentId,
      description: iterationOf(a.agentId) !== undefined ? iterationPickDescription(race, a.agentId)
        : agentPickDescription(a.state, store.elapsedMs(race.raceId, a.agentId), store.rankingOf(race.raceId, a.agentId),
          store.winnerOf(race.raceId) === a.agentId),
      agent: a,
    })),
    { placeHolder },
  );
  return picked?.agent;
}

/**
 * What a race's results are, for a command that diffs, compares or merges
 * them: its agents, or a collaboration's iterations.
 */
export function resultsOf(race: RaceSummary): AgentState[] {
  return isCollab(race) ? iterationAgents(race) : race.agents;
}

/**
 * Resolves a command's argument to a race and agent, asking for what is
 * missing. `results`: the agent is one of the race's results (a
 * collaboration's iterations, see resultsOf), not one of the agents that ran.
 */
export async function resolveAgent(
  session: HydraSession, arg: unknown, what: string, results = false,
): Promise<{ race: RaceSummary; agent: AgentState; path?: string } | undefined> {
  const target = targetOf(arg);
  let race = target ? session.store.get(target.raceId) : undefined;
  if (!race) race = await pickRace(session, `The race whose agent to ${what}`);
  if (!race) return undefined;
  const among = results ? resultsOf(race) : race.agents;
  if (among.length === 0 && isCollab(race)) {
    void vscode.window.showInformationMessage(`Hydra: collaboration ${race.raceId} has no iteration yet.`);
    return undefined;
  }
  const agent = among.find((a) => a.agentId === target?.agentId) ?? (await pickAgent(session, race, `The agent to ${what}`, among));
  return agent ? { race, agent, path: target?.path } : undefined;
}

export function firstLine(text: string): string {
  const line = text.split('\n', 1)[0].trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/**
 * The executor for a run: asked only when hydra offers more than one (the
 * default first, Enter takes it). `{}` when there is nothing to ask,
 * undefined when the pick was dismissed.
 */
export async function pickExecutor(executors: string[] | undefined, what: string): Promise<{ executor?: string } | undefined> {
  const items = executorItems(executors);
  if (!items) return {};
  const picked = await vscode.window.showQuickPick(items, { title: `Hydra: where the ${what} runs`, placeHolder: 'The executor ([executor] in hydra.toml)' });
  return picked ? { executor: picked.executor } : undefined;
}
