// Collaborations: one agent builds, another reviews, in rounds (hydra/collab).
// Starting one (the task, the builder, the reviewer), and an iteration's
// review as a read-only Markdown document of the `hydra-review:` scheme. Its
// iterations are diffed, compared and merged by the race commands
// (agentId "builder@N"); the view draws them (view.ts, collabView.ts).
import * as vscode from 'vscode';
import * as proto from './protocol';
import type { HydraSession } from './session';
import { briefProblem, describeServerError, raceIsActive, unconfinedNotice } from './format';
import { isCollab, iterationAgentId, iterationOf, reviewFirstLine } from './collabModel';
import { firstLine, pickExecutor, pickRace, targetOf } from './pick';
import { type AgentPick, agentPicks, isAgentPick } from './races';
import { trackProgress } from './progress';
import { refusedForConfig } from './configOpen';

export const REVIEW_SCHEME = 'hydra-review';

/** hydra-review:/RACE/builder@N review.md: the path's extension makes it Markdown. */
export function reviewUri(raceId: string, iteration: number): vscode.Uri {
  return vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${raceId}/${iterationAgentId(iteration)} review.md` });
}

function parseReviewUri(uri: vscode.Uri): { raceId: string; iteration: number } | undefined {
  const m = /^\/([^/]+)\/(builder@\d+) review\.md$/.exec(uri.path);
  const iteration = iterationOf(m?.[2]);
  return m && iteration !== undefined ? { raceId: m[1], iteration } : undefined;
}

/** A review never changes once written: it is read from the store, or from hydra/status when the store lacks it. */
class ReviewContentProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly session: HydraSession) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const shown = parseReviewUri(uri);
    if (!shown) return '';
    const known = reviewOf(this.session.store.get(shown.raceId), shown.iteration);
    if (known !== undefined) return known;
    try {
      const status = await this.session.requestOrThrow(proto.status, { raceId: shown.raceId });
      this.session.store.setSummaries(status.races);
      return reviewOf(status.races[0], shown.iteration) ?? '';
    } catch (error) {
      void vscode.window.showErrorMessage(`Hydra: ${describeServerError(error)}`);
      return '';
    }
  }
}

function reviewOf(race: proto.RaceSummary | undefined, iteration: number): string | undefined {
  return race?.iterations?.find((i) => i.iteration === iteration)?.review;
}

/**
 * Opens an iteration's review: the row it was invoked on, or a collaboration
 * and one of its reviewed iterations picked.
 */
async function showReview(session: HydraSession, arg: unknown): Promise<void> {
  const target = targetOf(arg);
  let race = target ? session.store.get(target.raceId) : undefined;
  const reviewed = (r: proto.RaceSummary) => (r.iterations ?? []).filter((i) => i.review !== undefined);
  race ??= await pickRace(session, 'The collaboration whose review to show', (r) => isCollab(r) && reviewed(r).length > 0,
    'no collaboration has a review yet');
  if (!race) return;
  let iteration = iterationOf(target?.agentId);
  if (iteration === undefined) {
    const items = reviewed(race).map((i) => ({
      label: iterationAgentId(i.iteration),
      description: `${i.approved ? 'approved · ' : ''}${reviewFirstLine(i.review) ?? ''}`,
      iteration: i.iteration,
    }));
    if (items.length === 0) {
      void vscode.window.showInformationMessage(`Hydra: no iteration of collaboration ${race.raceId} was reviewed yet.`);
      return;
    }
    iteration = items.length === 1 ? items[0].iteration
      : (await vscode.window.showQuickPick(items, { placeHolder: 'The iteration whose review to show' }))?.iteration;
    if (iteration === undefined) return;
  }
  const summary = race.iterations?.find((i) => i.iteration === iteration);
  if (summary && summary.review === undefined) {
    const why = summary.reviewStatus ? `its review ${summary.reviewStatus}` : 'the last iteration is not reviewed';
    void vscode.window.showInformationMessage(`Hydra: ${iterationAgentId(iteration)} has no review: ${why}.`);
    return;
  }
  const doc = await vscode.workspace.openTextDocument(reviewUri(race.raceId, iteration));
  await vscode.window.showTextDocument(doc, { preview: true });
}

/**
 * Asks for one agent, for `role`. hydra.toml's choice for the role, when
 * hydra names it, comes first and is the one Enter takes. An agent that is
 * not available cannot be taken: the title says why.
 */
function pickOne(agents: proto.AgentInfo[], role: 'builder' | 'reviewer', preferred: string | undefined,
  title: string): Promise<string | undefined> {
  const items = agentPicks(agents, []);
  const first = items.find((i): i is AgentPick => isAgentPick(i) && i.available && i.name === preferred);
  if (first) {
    first.description = `hydra.toml's ${role} · ${first.description ?? ''}`;
    items.splice(items.indexOf(first), 1);
    items.unshift(first);
  }
  const quickPick = vscode.window.createQuickPick<AgentPick | vscode.QuickPickItem>();
  quickPick.title = title;
  quickPick.placeholder = role === 'builder' ? 'The agent that builds, then refines after each review' : 'The agent that reviews each iteration';
  quickPick.ignoreFocusOut = true;
  quickPick.items = items;
  if (first) quickPick.activeItems = [first];
  return new Promise((resolve) => {
    let answered = false;
    quickPick.onDidAccept(() => {
      const chosen = quickPick.selectedItems[0] ?? quickPick.activeItems[0];
      if (!chosen || !isAgentPick(chosen)) return;
      if (!chosen.available) {
        quickPick.title = `${chosen.name} is not available${chosen.problem ? `: ${briefProblem(chosen.problem)}` : ''}`;
        return;
      }
      answered = true;
      resolve(chosen.name);
      quickPick.hide();
    });
    quickPick.onDidHide(() => {
      if (!answered) resolve(undefined);
      quickPick.dispose();
    });
    quickPick.show();
  });
}

/** Starts a collaboration: the task, the builder, the reviewer, then hydra/collab with a progress notification. */
async function startCollaboration(session: HydraSession): Promise<void> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage(
      'Hydra: collaborations run the commands in hydra.toml, so they start only in a trusted workspace.',
      'Manage Workspace Trust',
    ).then((c) => c && vscode.commands.executeCommand('workbench.trust.manage'));
    return;
  }
  if (await refusedForConfig(session)) return;
  const task = await vscode.window.showInputBox({
    title: 'Hydra: Start Collaboration',
    prompt: 'The task: one agent builds it, another reviews each iteration',
    placeHolder: 'Handle the empty cart in cart.py',
    validateInput: (v) => (v.trim() ? undefined : 'The task must not be blank.'),
  });
  if (!task) return;
  const available = await session.request(proto.agents);
  if (!available) return;
  const defaults = available.collaboration ?? {};
  const builder = await pickOne(available.agents, 'builder', defaults.builder ?? undefined, 'Hydra: the builder (1/2)');
  if (!builder) return;
  const reviewer = await pickOne(available.agents, 'reviewer', defaults.reviewer ?? undefined,
    `Hydra: the reviewer of ${builder}'s work (2/2)`);
  if (!reviewer) return;
  const where = await pickExecutor(available.executors, 'collaboration');
  if (!where) return;
  const progress = await trackProgress(session);
  const since = session.messagesSoFar;
  let result: proto.CollabResult;
  try {
    result = await session.requestOrThrow(proto.collab, { task, builder, reviewer, ...where, workDoneToken: progress.token });
  } catch (error) {
    progress.abandon();
    await session.showError(error, since);
    return;
  }
  session.store.collabStarted(task, result);
  void vscode.commands.executeCommand('hydra.races.focus');
  const unconfined = unconfinedNotice(result);
  if (unconfined) void vscode.window.showWarningMessage(unconfined);
  // As for a race: the progress notification follows it, the status bar says it started.
  vscode.window.setStatusBarMessage(
    `Hydra: collaboration ${result.raceId} started: ${result.collaboration?.builder ?? builder} builds, ${
      result.collaboration?.reviewer ?? reviewer} reviews`, 10000);
}

/**
 * A collaboration of this window that stopped early because one of its
 * agents failed says so (when it has no winner at all, the race's own notice
 * says that).
 */
function collabFinished(session: HydraSession, p: proto.RaceFinishedParams): void {
  const race = session.store.get(p.raceId);
  if (!isCollab(race) || raceIsActive(p.status) || !p.winner) return;
  if (p.stopReason === 'builderFailed' || p.stopReason === 'reviewerFailed') {
    const who = p.stopReason === 'builderFailed' ? 'builder' : 'reviewer';
    void vscode.window.showWarningMessage(
      `Hydra: collaboration ${p.raceId} (${firstLine(race?.task ?? '')}) stopped: its ${who} failed; the best iteration is ${p.winner}.`, 'Show Agent Output')
      .then((choice) => choice && vscode.commands.executeCommand('hydra.showAgentOutput', { raceId: p.raceId, agentId: who }));
  }
}

export function activate(context: vscode.ExtensionContext, session: HydraSession): void {
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, new ReviewContentProvider(session)),
    vscode.commands.registerCommand('hydra.startCollaboration', () => startCollaboration(session)),
    vscode.commands.registerCommand('hydra.showReview', (arg?: unknown) => showReview(session, arg)),
    session.onRaceFinished.event((p) => collabFinished(session, p)),
  );
}
