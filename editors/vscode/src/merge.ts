// Merging an agent's branch: a dry run first, its outcome shown in a modal
// confirmation, then the merge itself. hydra refuses (and says why) when the
// working tree or the repository's state is not fit for it.
import * as vscode from 'vscode';
import * as proto from './protocol';
import type { HydraSession } from './session';
import { describeDryRun, raceIsActive } from './format';
import { pickRace, resolveAgent, targetOf } from './pick';

/** Merges `agentId` (or, when undefined, the race's winner) after the user confirms. */
export async function confirmAndMerge(session: HydraSession, raceId: string, agentId?: string): Promise<proto.MergeResult | undefined> {
  const preview = await session.request(proto.merge, { raceId, agentId, dryRun: true });
  if (!preview) return undefined;
  const plan = describeDryRun(preview);
  if (preview.outcome === 'conflict' || preview.outcome === 'upToDate') {
    void vscode.window.showWarningMessage(`Hydra: ${plan}`);
    return undefined;
  }
  const choice = await vscode.window.showWarningMessage(
    `Merge ${preview.agentId} into ${preview.targetBranch}?`,
    { modal: true, detail: `${plan}\nThe race's worktrees and branches are removed afterwards.` },
    'Merge',
  );
  if (choice !== 'Merge') return undefined;
  const result = await session.request(proto.merge, { raceId, agentId: preview.agentId });
  if (!result) return undefined;
  if (result.outcome === 'conflict') return result; // hydra's own window/showMessage says so
  const commit = result.commit ? ` (now at ${result.commit.slice(0, 8)})` : '';
  void vscode.window.showInformationMessage(
    `Hydra: merged ${result.agentId} into ${result.targetBranch}${commit}: ${result.files.join(', ') || 'no files'}.`);
  void session.refresh();
  return result;
}

async function mergeAgent(session: HydraSession, arg: unknown): Promise<void> {
  const chosen = await resolveAgent(session, arg, 'merge');
  if (chosen) await confirmAndMerge(session, chosen.race.raceId, chosen.agent.agentId);
}

async function mergeWinner(session: HydraSession, arg: unknown): Promise<void> {
  const raceId = targetOf(arg)?.raceId ??
    (await pickRace(session, 'The race whose winner to merge', (r) => !raceIsActive(r.state)))?.raceId;
  if (raceId) await confirmAndMerge(session, raceId);
}

export function activate(context: vscode.ExtensionContext, session: HydraSession): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('hydra.mergeAgent', (arg?: unknown) => mergeAgent(session, arg)),
    vscode.commands.registerCommand('hydra.mergeWinner', (arg?: unknown) => mergeWinner(session, arg)),
  );
}
