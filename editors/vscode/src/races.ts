// Starting, cancelling, browsing and cleaning up races. A race runs the
// commands hydra.toml names, so none starts in an untrusted workspace.
import * as vscode from 'vscode';
import * as proto from './protocol';
import type { HydraSession } from './session';
import {
  agentFinishedNotice, autoMergeNotice, briefProblem, escapesMessage, raceIsActive, raceOutcome, refusedAgent,
  plainState, replaceAgent, unconfinedNotice,
} from './format';
import { firstLine, pickAgent, pickExecutor, pickRace, raceItem, targetOf } from './pick';
import { shortIds } from './raceLabel';
import { trackProgress } from './progress';
import { refusedForConfig } from './configOpen';
import { isCollab } from './collabModel';

export interface AgentPick extends vscode.QuickPickItem {
  name: string;
  available: boolean;
  problem?: string;
}

/**
 * The agents to offer: available ones first (configured ones first), the ones
 * in `picked` already ticked; then, under a "not available" separator, those
 * that cannot run here, each with hydra's reason.
 */
export function agentPicks(agents: proto.AgentInfo[], picked: string[]): Array<AgentPick | vscode.QuickPickItem> {
  const ordered = [...agents].sort((a, b) => Number(b.configured) - Number(a.configured) || a.name.localeCompare(b.name));
  const available = ordered.filter((a) => a.available).map((a): AgentPick => ({
    name: a.name,
    available: true,
    label: a.name,
    description: `${a.adapter}${a.version ? ' · ' + a.version : ''}`,
    detail: a.path,
    picked: picked.includes(a.name),
  }));
  const unavailable = ordered.filter((a) => !a.available).map((a): AgentPick => ({
    name: a.name,
    available: false,
    problem: a.problem,
    label: `$(circle-slash) ${a.name}`,
    description: 'not available',
    detail: a.problem,
  }));
  if (unavailable.length === 0) return available;
  return [...available, { label: 'not available', kind: vscode.QuickPickItemKind.Separator }, ...unavailable];
}

export function isAgentPick(item: vscode.QuickPickItem): item is AgentPick {
  return typeof (item as Partial<AgentPick>).name === 'string';
}

/**
 * Asks for the agents to race. An agent that is not available cannot stay
 * ticked: ticking it unticks it again, and the title says why. `note` opens
 * the title: what became of the agents asked for (hydra.defaultAgents, or a
 * race hydra refused) that cannot be ticked.
 */
function pickAgents(items: Array<AgentPick | vscode.QuickPickItem>, note: string | undefined): Promise<string[] | undefined> {
  const quickPick = vscode.window.createQuickPick<AgentPick | vscode.QuickPickItem>();
  quickPick.title = note ? `Hydra: agents to race (${note})` : 'Hydra: agents to race';
  quickPick.placeholder = 'Pick the agents that race on this task';
  quickPick.canSelectMany = true;
  quickPick.ignoreFocusOut = true;
  quickPick.items = items;
  quickPick.selectedItems = items.filter((p) => p.picked);
  return new Promise((resolve) => {
    let answered = false;
    quickPick.onDidChangeSelection((selection) => {
      const refused = selection.filter((p) => !isAgentPick(p) || !p.available);
      if (refused.length === 0) return;
      quickPick.selectedItems = selection.filter((p) => isAgentPick(p) && p.available);
      quickPick.title = refused.filter(isAgentPick)
        .map((p) => `${p.name} is not available${p.problem ? `: ${briefProblem(p.problem)}` : ''}`).join('; ');
    });
    quickPick.onDidAccept(() => {
      answered = true;
      resolve(quickPick.selectedItems.filter((p): p is AgentPick => isAgentPick(p) && p.available).map((p) => p.name));
      quickPick.hide();
    });
    quickPick.onDidHide(() => {
      if (!answered) resolve(undefined);
      quickPick.dispose();
    });
    quickPick.show();
  });
}

/** What the title says of the agents asked for that cannot be ticked: unknown to hydra, or not available. */
function unpickable(asked: string[], agents: proto.AgentInfo[], what: string): string | undefined {
  const notes = asked.flatMap((name) => {
    const agent = agents.find((a) => a.name === name);
    if (!agent) return [`${what} names '${name}', an agent hydra does not know`];
    return agent.available ? [] : [`${what} names '${name}', which is not available`];
  });
  return notes.length > 0 ? notes.join('; ') : undefined;
}

/**
 * Starts a race: asks for the task (unless given), then the agents (unless
 * given), and hands it to hydra. A race hydra refuses for one of its agents
 * (a name it does not know, an agent that cannot run here) says why and offers
 * to pick the agents again for the same task, or to race with the name hydra
 * suggests.
 */
async function startRace(
  session: HydraSession, again?: { task: string; agents?: string[]; picked?: string[]; note?: string; executor?: string },
): Promise<void> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage(
      'Hydra: races run the commands in hydra.toml, so they start only in a trusted workspace.',
      'Manage Workspace Trust',
    ).then((c) => c && vscode.commands.executeCommand('workbench.trust.manage'));
    return;
  }
  if (!again && await refusedForConfig(session)) return;
  const task = again?.task ?? await vscode.window.showInputBox({
    title: 'Hydra: Start Race',
    prompt: 'The task every agent gets',
    placeHolder: 'Fix the discount rounding in cart.py',
    validateInput: (v) => (v.trim() ? undefined : 'The task must not be blank.'),
  });
  if (!task) return;
  let chosen = again?.agents;
  // Asked once: a race tried again for the same task keeps the executor picked.
  let where: { executor?: string } | undefined = again?.executor ? { executor: again.executor } : undefined;
  if (!chosen || !where) {
    const available = await session.request(proto.agents);
    if (!available) return;
    if (!chosen) {
      const asked = again?.picked ?? vscode.workspace.getConfiguration('hydra').get<string[]>('defaultAgents', []);
      const note = again?.note ?? unpickable(asked, available.agents, 'hydra.defaultAgents');
      chosen = await pickAgents(agentPicks(available.agents, asked), note);
      if (!chosen || chosen.length === 0) return;
    }
    where = await pickExecutor(available.executors, 'race');
  }
  if (!chosen || chosen.length === 0 || !where) return;
  const progress = await trackProgress(session);
  const since = session.messagesSoFar;
  let result: proto.RaceResult;
  try {
    result = await session.requestOrThrow(proto.race, { task, agents: chosen, ...where, workDoneToken: progress.token });
  } catch (error) {
    progress.abandon();
    await raceRefused(session, error, since, task, chosen, where.executor);
    return;
  }
  session.store.raceStarted(task, result);
  void vscode.commands.executeCommand('hydra.races.focus');
  // Agents run with your permissions when bubblewrap cannot confine them: say so.
  const unconfined = unconfinedNotice(result);
  if (unconfined) void vscode.window.showWarningMessage(unconfined);
  // The progress notification follows the race; a toast for its start
  // would only pile up with the next race's. The status bar shows one
  // message at a time: the next race's replaces this one.
  vscode.window.setStatusBarMessage(
    `Hydra: race ${result.raceId} started with ${result.agents.map((a) => a.agentId).join(', ')}`, 10000);
}

/** A race hydra refused: an agent it names hydra does not know or cannot run gets a way out, anything else its error. */
async function raceRefused(
  session: HydraSession, error: unknown, since: number, task: string, agents: string[], executor: string | undefined,
): Promise<void> {
  const code = (error as { code?: unknown } | undefined)?.code;
  const refused = refusedAgent(error);
  if (!refused || (code !== proto.ErrorCodes.UnknownAgentName && code !== proto.ErrorCodes.AgentUnavailable)) {
    await session.showError(error, since);
    return;
  }
  const instead = code === proto.ErrorCodes.UnknownAgentName ? refused.suggestion : undefined;
  const raceWith = instead ? `Race with ${instead}` : undefined;
  const pickAgain = 'Pick Agents Again';
  const choice = await session.showError(error, since, [...(raceWith ? [raceWith] : []), pickAgain]);
  if (raceWith && choice === raceWith && instead) {
    await startRace(session, { task, agents: replaceAgent(agents, refused.agent, instead), executor });
  } else if (choice === pickAgain) {
    const why = code === proto.ErrorCodes.UnknownAgentName ? 'an agent hydra does not know' : 'which is not available';
    await startRace(session, { task, picked: agents, note: `the race named '${refused.agent}', ${why}`, executor });
  }
}

/**
 * Tells the user about a race of theirs that ended without a winner to review,
 * and what [scoring] auto_merge did with the winner, if anything.
 */
async function raceFinished(p: proto.RaceFinishedParams): Promise<void> {
  const merged = autoMergeNotice(p);
  if (merged) {
    const show = merged.severity === 'info' ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
    void show(merged.message, 'Show Scoreboard').then((choice) => choice &&
      vscode.commands.executeCommand('hydra.showScoreboard', { raceId: p.raceId }));
  }
  const outcome = raceOutcome(p);
  if (!outcome) return;
  const action = p.rankings.length > 0 ? 'Show Scoreboard' : 'Show Agent Output';
  const show = outcome.severity === 'error' ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
  const choice = await show(outcome.message, action);
  if (choice === 'Show Scoreboard') await vscode.commands.executeCommand('hydra.showScoreboard', { raceId: p.raceId });
  if (choice === 'Show Agent Output') await vscode.commands.executeCommand('hydra.showAgentOutput', { raceId: p.raceId });
}

async function cancelRace(session: HydraSession, arg: unknown): Promise<void> {
  const raceId = targetOf(arg)?.raceId ?? (await pickRace(session, 'The race to cancel', (r) => raceIsActive(r.state)))?.raceId;
  if (!raceId) return;
  const result = await session.request(proto.cancel, { raceId });
  if (result && !result.cancelled) void vscode.window.showInformationMessage(`Hydra: race ${raceId} had already finished.`);
}

/** Cancels one agent (the row it was invoked on, or one picked among the agents still running); the others run on. */
async function cancelAgent(session: HydraSession, arg: unknown): Promise<void> {
  const target = targetOf(arg);
  let raceId = target?.raceId;
  let agentId = target?.agentId;
  if (!raceId || !agentId) {
    const race = (raceId ? session.store.get(raceId) : undefined) ??
      (await pickRace(session, 'The race whose agent to cancel', (r) => raceIsActive(r.state)));
    if (!race) return;
    const running = race.agents.filter((a) => a.state === 'queued' || a.state === 'running');
    if (running.length === 0) {
      void vscode.window.showInformationMessage(`Hydra: no agent of race ${race.raceId} is still running.`);
      return;
    }
    const agent = await pickAgent(session, race, 'The agent to cancel', running);
    if (!agent) return;
    raceId = race.raceId;
    agentId = agent.agentId;
  }
  const result = await session.request(proto.cancel, { raceId, agentId });
  if (result && !result.cancelled) void vscode.window.showInformationMessage(`Hydra: ${agentId} (race ${raceId}) had already finished.`);
}

async function showHistory(session: HydraSession): Promise<void> {
  const page = await session.request(proto.races, { limit: 100 });
  if (!page) return;
  session.store.setSummaries(page.races);
  const shorts = shortIds(session.store.list().map((r) => r.raceId));
  const picked = await vscode.window.showQuickPick(
    page.races.map((r) => ({
      ...raceItem(session.store, r, shorts, true),
      detail: `${r.agents.map((a) => `${a.agentId}: ${plainState(a.state)}`).join(' · ')} · ${r.raceId}`,
    })),
    { title: `Hydra: race history (${page.total})`, matchOnDescription: true, matchOnDetail: true },
  );
  if (!picked) return;
  const actions = [
    { label: 'Show Scoreboard', command: 'hydra.showScoreboard' },
    { label: 'Show Diff', command: 'hydra.showDiff' },
    { label: 'Show Agent Output', command: 'hydra.showAgentOutput' },
    { label: 'Show Agent Raw Log', command: 'hydra.showAgentRawLog' },
    ...(isCollab(picked.race) && picked.race.iterations?.some((i) => i.review !== undefined)
      ? [{ label: 'Show Review', command: 'hydra.showReview' }] : []),
    // A race without a winner has none to merge.
    ...(picked.race.state === 'completed' && !picked.race.allFailed && !picked.race.merged
      ? [{ label: 'Merge Winner', command: 'hydra.mergeWinner' }] : []),
  ];
  const action = await vscode.window.showQuickPick(actions, { title: firstLine(picked.race.task) });
  if (action) await vscode.commands.executeCommand(action.command, { raceId: picked.race.raceId });
}

/**
 * Removes worktrees and branches: of one race (`hydra.cleanUpRace`, from the
 * race's context menu), or of every finished race (`hydra.cleanUp`). The
 * latter takes no target: VS Code hands a view's title buttons the focused
 * row, which must not narrow "every race" down to it.
 */
async function cleanUp(session: HydraSession, raceId: string | undefined): Promise<void> {
  const choice = await vscode.window.showWarningMessage(
    raceId ? `Remove the worktrees and branches of race ${raceId}?` : 'Remove the worktrees and branches of every finished race?',
    { modal: true, detail: 'The race records stay, as history.' },
    'Remove', 'Remove, Keep Branches',
  );
  if (!choice) return;
  const result = await session.request(proto.cleanup, { raceId, keepBranches: choice !== 'Remove' });
  if (!result) return;
  void vscode.window.showInformationMessage(`Hydra: removed ${result.removed.length} worktree(s).`);
  void session.refresh();
}

export function activate(context: vscode.ExtensionContext, session: HydraSession): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('hydra.startRace', () => startRace(session)),
    vscode.commands.registerCommand('hydra.cancelAgent', (arg?: unknown) => cancelAgent(session, arg)),
    vscode.commands.registerCommand('hydra.cancelRace', (arg?: unknown) => cancelRace(session, arg)),
    vscode.commands.registerCommand('hydra.showRaceHistory', () => showHistory(session)),
    vscode.commands.registerCommand('hydra.cleanUp', () => cleanUp(session, undefined)),
    vscode.commands.registerCommand('hydra.cleanUpRace', async (arg?: unknown) => {
      const raceId = targetOf(arg)?.raceId ??
        (await pickRace(session, 'The race whose worktrees to remove', (r) => !raceIsActive(r.state)))?.raceId;
      if (raceId) await cleanUp(session, raceId);
    }),
    session.onRaceFinished.event((p) => void raceFinished(p)),
    session.onAgentFinished.event((p) => {
      const escaped = escapesMessage(p);
      if (escaped) void vscode.window.showErrorMessage(escaped);
      // Denials and warnings explain a poor result (a permission the agent
      // lacked, a model error) and keep it from being merged by itself.
      const notice = agentFinishedNotice(p);
      if (notice) {
        void vscode.window.showWarningMessage(notice, 'Show Agent Output').then((choice) => choice &&
          vscode.commands.executeCommand('hydra.showAgentOutput', { raceId: p.raceId, agentId: p.agentId }));
      }
    }),
  );
}
