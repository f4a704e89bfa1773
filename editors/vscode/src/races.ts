// Starting, cancelling, browsing and cleaning up races. A race runs the
// commands hydra.toml names, so none starts in an untrusted workspace.
import * as vscode from 'vscode';
import * as proto from './protocol';
import type { HydraSession } from './session';
import { ALL_FAILED, agentFinishedNotice, escapesMessage, raceIsActive, raceOutcome } from './format';
import { firstLine, pickRace, targetOf } from './pick';
import { trackRaceProgress } from './progress';

interface AgentPick extends vscode.QuickPickItem {
  name: string;
  available: boolean;
  problem?: string;
}

/** The agents to offer: available ones first, then configured ones; the ones in hydra.defaultAgents already picked. */
function agentPicks(agents: proto.AgentInfo[], defaults: string[]): AgentPick[] {
  const ordered = [...agents].sort((a, b) =>
    Number(b.available) - Number(a.available) || Number(b.configured) - Number(a.configured) || a.name.localeCompare(b.name));
  return ordered.map((a) => ({
    name: a.name,
    available: a.available,
    problem: a.problem,
    label: a.available ? a.name : `$(circle-slash) ${a.name}`,
    description: a.available ? `${a.adapter}${a.version ? ' · ' + a.version : ''}` : 'not available',
    detail: a.available ? a.path : a.problem,
    picked: a.available && defaults.includes(a.name),
  }));
}

/**
 * Asks for the agents to race. An agent that is not available cannot stay
 * ticked: ticking it unticks it again, and the title says why.
 */
function pickAgents(picks: AgentPick[]): Promise<string[] | undefined> {
  const title = 'Hydra: agents to race';
  const quickPick = vscode.window.createQuickPick<AgentPick>();
  quickPick.title = title;
  quickPick.placeholder = 'Pick the agents that race on this task';
  quickPick.canSelectMany = true;
  quickPick.ignoreFocusOut = true;
  quickPick.items = picks;
  quickPick.selectedItems = picks.filter((p) => p.picked);
  return new Promise((resolve) => {
    let answered = false;
    quickPick.onDidChangeSelection((selection) => {
      const refused = selection.filter((p) => !p.available);
      if (refused.length === 0) return;
      quickPick.selectedItems = selection.filter((p) => p.available);
      quickPick.title = refused.map((p) => `${p.name} is not available${p.problem ? `: ${p.problem}` : ''}`).join('; ');
    });
    quickPick.onDidAccept(() => {
      answered = true;
      resolve(quickPick.selectedItems.filter((p) => p.available).map((p) => p.name));
      quickPick.hide();
    });
    quickPick.onDidHide(() => {
      if (!answered) resolve(undefined);
      quickPick.dispose();
    });
    quickPick.show();
  });
}

async function startRace(session: HydraSession): Promise<void> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage(
      'Hydra: races run the commands in hydra.toml, so they start only in a trusted workspace.',
      'Manage Workspace Trust',
    ).then((c) => c && vscode.commands.executeCommand('workbench.trust.manage'));
    return;
  }
  const task = await vscode.window.showInputBox({
    title: 'Hydra: Start Race',
    prompt: 'The task every agent gets',
    placeHolder: 'Fix the discount rounding in cart.py',
    validateInput: (v) => (v.trim() ? undefined : 'The task must not be blank.'),
  });
  if (!task) return;
  const available = await session.request(proto.agents);
  if (!available) return;
  const defaults = vscode.workspace.getConfiguration('hydra').get<string[]>('defaultAgents', []);
  const chosen = await pickAgents(agentPicks(available.agents, defaults));
  if (!chosen || chosen.length === 0) return;
  const progress = await trackRaceProgress(session);
  const result = await session.request(proto.race, { task, agents: chosen, workDoneToken: progress.token });
  if (!result) {
    progress.abandon();
    return;
  }
  session.store.raceStarted(task, result);
  void vscode.commands.executeCommand('hydra.races.focus');
  // Agents run with your permissions when bubblewrap cannot confine them: say so.
  if (result.sandboxWarning) {
    void vscode.window.showWarningMessage(`Hydra: race ${result.raceId} runs its agents unconfined: ${result.sandboxWarning}`);
  }
  // The progress notification follows the race; a toast for its start
  // would only pile up with the next race's.
  vscode.window.setStatusBarMessage(
    `Hydra: race ${result.raceId} started with ${result.agents.map((a) => a.agentId).join(', ')}`, 10000);
}

/** Tells the user about a race of theirs that ended without a winner to review. */
async function raceFinished(p: proto.RaceFinishedParams): Promise<void> {
  const outcome = raceOutcome(p);
  if (!outcome) return;
  const action = p.rankings.length > 0 ? 'Show Scoreboard' : 'Show Agent Output';
  const show = outcome.severity === 'error' ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
  const choice = await show(outcome.message, action);
  if (choice === 'Show Scoreboard') await vscode.commands.executeCommand('hydra.showScoreboard', { raceId: p.raceId });
  if (choice === 'Show Agent Output') await vscode.commands.executeCommand('hydra.showAgentOutput', { raceId: p.raceId });
}

async function cancelRace(session: HydraSession, arg: unknown): Promise<void> {
  const target = targetOf(arg);
  const raceId = target?.raceId ?? (await pickRace(session, 'The race to cancel', (r) => raceIsActive(r.state)))?.raceId;
  if (!raceId) return;
  const result = await session.request(proto.cancel, { raceId, agentId: target?.agentId });
  if (result && !result.cancelled) void vscode.window.showInformationMessage(`Hydra: race ${raceId} had already finished.`);
}

async function showHistory(session: HydraSession): Promise<void> {
  const page = await session.request(proto.races, { limit: 100 });
  if (!page) return;
  session.store.setSummaries(page.races);
  const picked = await vscode.window.showQuickPick(
    page.races.map((r) => ({
      label: firstLine(r.task),
      description: `${r.state}${r.allFailed ? ` · ${ALL_FAILED}` : ''} · ${r.raceId}`,
      detail: r.agents.map((a) => `${a.agentId}: ${a.state}`).join(' · '),
      race: r,
    })),
    { title: `Hydra: race history (${page.total})`, matchOnDescription: true, matchOnDetail: true },
  );
  if (!picked) return;
  const actions = [
    { label: 'Show Scoreboard', command: 'hydra.showScoreboard' },
    { label: 'Show Diff', command: 'hydra.showDiff' },
    { label: 'Show Agent Output', command: 'hydra.showAgentOutput' },
    { label: 'Show Agent Raw Log', command: 'hydra.showAgentRawLog' },
    // A race without a winner has none to merge.
    ...(picked.race.state === 'completed' && !picked.race.allFailed ? [{ label: 'Merge Winner', command: 'hydra.mergeWinner' }] : []),
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
