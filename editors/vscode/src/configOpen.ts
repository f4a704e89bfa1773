// A hydra.toml error, said with an "Open hydra.toml" button that opens the
// file at the place hydra names, as an eval set's errors open the set.
import * as path from 'path';
import * as vscode from 'vscode';
import { type ConfigProblem, brokenConfigText } from './configProblem';
import type { HydraSession } from './session';

export const OPEN_CONFIG = 'Open hydra.toml';

/** The file a problem names: hydra gives hydra.toml's path, relative to the repository's root at times. */
function fileOf(problem: ConfigProblem): vscode.Uri | undefined {
  if (path.isAbsolute(problem.file)) return vscode.Uri.file(problem.file);
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  return folder ? vscode.Uri.file(path.join(folder, problem.file)) : undefined;
}

/** Opens hydra.toml with the cursor at the problem (its start, when hydra names no line). */
export async function openConfigAt(problem: ConfigProblem): Promise<void> {
  const file = fileOf(problem);
  if (!file) return;
  const at = new vscode.Position(Math.max(0, problem.line - 1), Math.max(0, problem.column - 1));
  await vscode.window.showTextDocument(file, { selection: new vscode.Range(at, at) });
}

/**
 * Shows `text` as an error with an "Open hydra.toml" button (before
 * `actions`); that button opens the file and answers undefined, any other
 * answers its own.
 */
export async function showConfigProblem(text: string, problem: ConfigProblem, actions: string[] = []): Promise<string | undefined> {
  const choice = await vscode.window.showErrorMessage(text, OPEN_CONFIG, ...actions);
  if (choice !== OPEN_CONFIG) return choice;
  await openConfigAt(problem);
  return undefined;
}

/**
 * Whether hydra.toml is broken, as hydra published it, before a race or a
 * collaboration asks for its task: it says so (with the button) and the
 * command stops, rather than asking for a task hydra would refuse.
 */
export async function refusedForConfig(session: HydraSession): Promise<boolean> {
  const broken = await session.brokenConfig();
  if (!broken) return false;
  void showConfigProblem(`Hydra: ${brokenConfigText(broken)}`, broken);
  return true;
}
