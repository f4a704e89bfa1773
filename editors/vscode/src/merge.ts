// Merging an agent's branch: a dry run first, its outcome shown in a modal
// confirmation, then the merge itself. hydra refuses (and says why) when the
// working tree or the repository's state is not fit for it, and when the race
// was merged already: a race gives one result, so a merged race is never
// offered again.
import * as vscode from 'vscode';
import * as proto from './protocol';
import type { HydraSession } from './session';
import { ALL_FAILED, alreadyMergedAgent, describeDryRun, mergeConcerns, mergedText, raceIsActive } from './format';
import { pickAgent, pickRace, resultsOf, targetOf } from './pick';

/** hydra/scores of a race, or undefined when it was not scored (or hydra cannot say). */
async function scoresOf(session: HydraSession, raceId: string): Promise<proto.ScoresResult | undefined> {
  try {
    return await session.requestOrThrow(proto.scores, { raceId });
  } catch {
    return undefined;
  }
}

/**
 * Asks before a merge. The winner, with nothing against it, gets a plain
 * question with "Merge" as its primary button. Any other agent gets a warning
 * that says its rank and score and what speaks against it (failed checks,
 * flags, every agent failed...), and offers "Merge Anyway" only as a secondary
 * button: the primary one, where Enter lands, shows the scoreboard instead.
 */
async function confirm(session: HydraSession, raceId: string, preview: proto.MergeResult, plan: string): Promise<'merge' | 'force' | undefined> {
  // The scoreboard's concerns; when it has none, hydra's own (its dry run's),
  // so that nothing hydra would refuse without force goes unsaid.
  let concerns = mergeConcerns(await scoresOf(session, raceId), preview.agentId);
  if (concerns.length === 0) concerns = preview.concerns ?? [];
  const after = "The race's worktrees and branches are removed afterwards.";
  if (concerns.length === 0) {
    const choice = await vscode.window.showInformationMessage(
      `Merge ${preview.agentId}, the winner, into ${preview.targetBranch}?`, { modal: true, detail: `${plan}\n${after}` }, 'Merge');
    return choice === 'Merge' ? 'merge' : undefined;
  }
  const choice = await vscode.window.showWarningMessage(
    `${preview.agentId} is not a safe pick. Merge it into ${preview.targetBranch} anyway?`,
    { modal: true, detail: `${concerns.map((c) => `• ${c[0].toUpperCase()}${c.slice(1)}.`).join('\n')}\n\n${plan}\n${after}` },
    'Show Scoreboard', 'Merge Anyway');
  if (choice === 'Show Scoreboard') await vscode.commands.executeCommand('hydra.showScoreboard', { raceId });
  // Asked and answered here: hydra is told to merge it anyway.
  return choice === 'Merge Anyway' ? 'force' : undefined;
}

/** Merges `agentId` (or, when undefined, the race's winner) after the user confirms. */
export async function confirmAndMerge(session: HydraSession, raceId: string, agentId?: string): Promise<proto.MergeResult | undefined> {
  const merged = session.store.mergedOf(raceId);
  if (merged) {
    void vscode.window.showInformationMessage(`Hydra: race ${raceId} was merged already: ${mergedText(merged)}.`);
    return undefined;
  }
  const preview = await mergeRequest(session, { raceId, agentId, dryRun: true });
  if (!preview) return undefined;
  const plan = describeDryRun(preview);
  if (preview.outcome === 'conflict' || preview.outcome === 'upToDate') {
    void vscode.window.showWarningMessage(`Hydra: ${plan}`);
    return undefined;
  }
  const answer = await confirm(session, raceId, preview, plan);
  if (!answer) return undefined;
  const result = await mergeRequest(session, { raceId, agentId: preview.agentId, force: answer === 'force' });
  if (!result) return undefined;
  if (result.outcome === 'conflict') return result; // hydra's own window/showMessage says so
  // The view, the scoreboard and the findings on its worktrees follow at once.
  session.store.merged(raceId, result);
  const commit = result.commit ? ` (now at ${result.commit.slice(0, 8)})` : '';
  void vscode.window.showInformationMessage(
    `Hydra: merged ${result.agentId} into ${result.targetBranch}${commit}: ${result.files.join(', ') || 'no files'}.`);
  void session.refresh();
  return result;
}

/**
 * hydra/merge; a refusal is shown in hydra's words. One for a race merged
 * meanwhile (from the terminal, another window) also reloads the races, so
 * that it shows as merged and is not offered again.
 */
async function mergeRequest(session: HydraSession, params: proto.MergeParams): Promise<proto.MergeResult | undefined> {
  const since = session.messagesSoFar;
  try {
    return await session.requestOrThrow(proto.merge, params);
  } catch (error) {
    void session.showError(error, since);
    if (alreadyMergedAgent(error) !== undefined) await session.refresh();
    return undefined;
  }
}

/** Whether a race has a winner that could still be merged: scored, not merged, not lost by every agent. */
function mergeable(session: HydraSession, race: proto.RaceSummary): boolean {
  return race.state === 'completed' && !race.merged && !session.store.allFailedIn(race.raceId);
}

/**
 * Merges the agent a tree item names (the view offers only agents that can
 * win), or one picked among the agents of a race that can: an agent that
 * failed, timed out, was cancelled or changed nothing is never offered. A
 * collaboration's are its iterations ("builder@N").
 */
async function mergeAgent(session: HydraSession, arg: unknown): Promise<void> {
  const target = targetOf(arg);
  if (target?.agentId) {
    await confirmAndMerge(session, target.raceId, target.agentId);
    return;
  }
  const race = (target && session.store.get(target.raceId)) ??
    (await pickRace(session, 'The race whose agent to merge', (r) => !raceIsActive(r.state) && !r.merged,
      'no race is left to merge: each one is still running or was merged already'));
  if (!race) return;
  if (race.merged) {
    void vscode.window.showInformationMessage(`Hydra: race ${race.raceId} was merged already: ${mergedText(race.merged)}.`);
    return;
  }
  const scores = await scoresOf(session, race.raceId);
  if (scores) session.store.setScores(race.raceId, scores);
  const eligible = resultsOf(race).filter((a) => scores?.rankings.find((r) => r.agentId === a.agentId)?.eligible !== false);
  if (eligible.length === 0) {
    void vscode.window.showWarningMessage(`Hydra: ${ALL_FAILED} in race ${race.raceId}: no agent of it can be merged.`);
    return;
  }
  const agent = await pickAgent(session, race, 'The agent to merge', eligible);
  if (agent) await confirmAndMerge(session, race.raceId, agent.agentId);
}

async function mergeWinner(session: HydraSession, arg: unknown): Promise<void> {
  const raceId = targetOf(arg)?.raceId ?? (await pickRace(session, 'The race whose winner to merge',
    (r) => mergeable(session, r), 'no race has a winner left to merge: each finished race was merged already or has no winner'))?.raceId;
  if (!raceId) return;
  if (session.store.allFailedIn(raceId)) {
    void vscode.window.showWarningMessage(`Hydra: ${ALL_FAILED} to merge in race ${raceId}.`);
    return;
  }
  await confirmAndMerge(session, raceId);
}

export function activate(context: vscode.ExtensionContext, session: HydraSession): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('hydra.mergeAgent', (arg?: unknown) => mergeAgent(session, arg)),
    vscode.commands.registerCommand('hydra.mergeWinner', (arg?: unknown) => mergeWinner(session, arg)),
  );
}
