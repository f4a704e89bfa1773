// "Hydra: Take This Change": in a Hydra diff, the agent's change under the
// cursor (one hunk of its change against the base) goes into the user's own
// file in the working tree, and nothing else of it. The lines it replaces
// must still be as they were at the base (the user's other edits, and the
// changes taken before, may have moved them); if the user changed them, nothing
// is taken. The file is saved, unless it had unsaved changes of the user's.
// In a comparison of two agents, whose change it takes is asked first, by
// name ("Take careful's change"): see takeSource.ts.
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import * as proto from './protocol';
import type { HydraSession } from './session';
import { parseContentUri, SCHEME } from './diff';
import { type ShownDocument, takeLabel, takeSource } from './takeSource';
import { diffLines, hunkAt, positionOf, splitLines, takeHunk, textEdit } from './hunks';

/** The Hydra document the cursor is in: the focused side of a Hydra diff, or the one the editor title's button was on. */
function hydraEditor(arg: unknown): vscode.TextEditor | undefined {
  const active = vscode.window.activeTextEditor;
  if (active?.document.uri.scheme === SCHEME) return active;
  if (arg instanceof vscode.Uri) return vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === arg.toString());
  return undefined;
}

/** The git repository the workspace is in: hydra's paths are relative to its root. */
function repositoryRoot(): string | undefined {
  let dir = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  while (dir) {
    if (fs.existsSync(path.join(dir, '.git'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
  return undefined;
}

const unix = (text: string) => text.replace(/\r\n/g, '\n');

/** The other side of the diff the document is shown in, when that is a Hydra document too. */
function otherSide(uri: vscode.Uri): ShownDocument | undefined {
  const same = (u: vscode.Uri) => u.toString() === uri.toString();
  const groups = [vscode.window.tabGroups.activeTabGroup, ...vscode.window.tabGroups.all];
  for (const tab of groups.flatMap((g) => [g.activeTab, ...g.tabs])) {
    const input = tab?.input;
    if (!(input instanceof vscode.TabInputTextDiff)) continue;
    if (same(input.modified)) return parseContentUri(input.original);
    if (same(input.original)) return parseContentUri(input.modified);
  }
  // In the changes editor (Show All Changes, Compare All Changes) no tab is the file's diff: its two
  // sides are the visible editors of the same race's same file.
  const shown = parseContentUri(uri);
  for (const editor of vscode.window.visibleTextEditors) {
    const other = parseContentUri(editor.document.uri);
    if (other && !same(editor.document.uri) && other.raceId === shown?.raceId && other.path === shown.path) return other;
  }
  return undefined;
}

async function takeChange(session: HydraSession, arg: unknown): Promise<void> {
  const editor = hydraEditor(arg);
  const shown = editor && parseContentUri(editor.document.uri);
  if (!editor || !shown) {
    void vscode.window.showInformationMessage('Hydra: put the cursor on a change in an agent\'s diff (Hydra: Show Diff) first.');
    return;
  }
  const source = takeSource(shown, otherSide(editor.document.uri));
  if ('unchanged' in source) {
    void vscode.window.showInformationMessage(`Hydra: ${source.unchanged} left ${shown.path} as it was at the base: it has no change to take. ${
      takeLabel(source.other)} from its side of the comparison.`);
    return;
  }
  const { raceId, agentId } = shown;
  const changes = await session.request(proto.diff, { raceId, agentId });
  if (!changes) return;
  const change = changes.files.find((f) => f.path === shown.path);
  const contents = change && !change.binary ? await session.request(proto.fileContents, { raceId, agentId, path: shown.path }) : undefined;
  if (!change || (change.binary || contents?.encoding === 'base64')) {
    void vscode.window.showInformationMessage(`Hydra: ${shown.path} is ${change ? 'not text' : `not among ${agentId}'s changes`}: it has no change to take.`);
    return;
  }
  if (!contents) return;
  const base = splitLines(unix(contents.base ?? ''));
  const agent = splitLines(unix(contents.agent ?? ''));
  const line = editor.selection.active.line;
  const hunks = diffLines(base, agent);
  const hunk = hunkAt(hunks, line, shown.side);
  if (!hunk) {
    void vscode.window.showInformationMessage(
      `Hydra: ${agentId} changed nothing at line ${line + 1} of ${shown.side === 'base' ? 'the base' : 'its version'}; it changed ${
        hunks.length} place(s) in ${shown.path}.`);
    return;
  }
  const root = repositoryRoot();
  if (!root) {
    void vscode.window.showErrorMessage('Hydra: the workspace is not in a git repository: there is no working tree to take the change into.');
    return;
  }
  // A renamed file's change goes into the file under its old name: the one the working tree has.
  const relative = change.oldPath ?? change.path;
  const file = vscode.Uri.file(path.join(root, relative));
  const document = fs.existsSync(file.fsPath) ? await vscode.workspace.openTextDocument(file) : undefined;
  const before = unix(document?.getText() ?? '');
  const taken = takeHunk(base, agent, hunk, splitLines(before));
  const where = hunk.agentEnd > hunk.agentStart ? `lines ${hunk.agentStart + 1}-${hunk.agentEnd}` : `line ${hunk.agentStart + 1}`;
  if ('problem' in taken) {
    if (taken.problem === 'taken') {
      void vscode.window.showInformationMessage(`Hydra: ${relative} has ${agentId}'s change at ${where} already.`);
    } else {
      void vscode.window.showWarningMessage(
        `Hydra: ${relative} was changed where ${agentId} changed it (${where} of its version): nothing was taken.`, 'Open File')
        .then((choice) => choice && vscode.window.showTextDocument(file));
    }
    return;
  }
  // Both sides of a comparison are agents' versions: say whose change this is before taking it.
  if (source.comparedWith !== undefined) {
    const take = takeLabel(agentId);
    const choice = await vscode.window.showInformationMessage(`${take} at ${where} into ${relative}?`, {
      modal: true,
      detail: `The comparison shows ${agentId}'s version (where the cursor is) and ${source.comparedWith}'s. ${
        take} takes only this change of ${agentId}'s, nothing of ${source.comparedWith}'s.`,
    }, take);
    if (choice !== take) return;
  }
  const after = taken.lines.join('\n');
  if (document) {
    const edit = textEdit(before, after);
    const eol = document.eol === vscode.EndOfLine.CRLF ? '\r\n' : '\n';
    const start = positionOf(before, edit.start);
    const end = positionOf(before, edit.end);
    const workspaceEdit = new vscode.WorkspaceEdit();
    workspaceEdit.replace(file, new vscode.Range(start.line, start.character, end.line, end.character), edit.text.replace(/\n/g, eol));
    const hadUnsaved = document.isDirty;
    if (!(await vscode.workspace.applyEdit(workspaceEdit))) {
      void vscode.window.showErrorMessage(`Hydra: VS Code refused to change ${relative}.`);
      return;
    }
    if (!hadUnsaved) await document.save();
  } else {
    await vscode.workspace.fs.writeFile(file, Buffer.from(after, 'utf8'));
  }
  const unsaved = document?.isDirty ? ' (not saved: it has unsaved changes of yours)' : '';
  void vscode.window.showInformationMessage(`Hydra: took ${agentId}'s change at ${where} into ${relative}${unsaved}.`, 'Open File')
    .then((choice) => choice && vscode.window.showTextDocument(file, { selection: new vscode.Range(taken.at, 0, taken.at, 0) }));
}

export function activate(context: vscode.ExtensionContext, session: HydraSession): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('hydra.takeChange', (arg?: unknown) => takeChange(session, arg)),
  );
}
