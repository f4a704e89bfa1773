// Diffs in VS Code's own diff editor: the base and the agent's version of a
// file are documents of the `hydra:` scheme, served from hydra/diff (git's
// objects, never a worktree that may still change).
import * as vscode from 'vscode';
import * as proto from './protocol';
import type { HydraSession } from './session';
import { describeServerError } from './format';
import { resolveAgent } from './pick';

export const SCHEME = 'hydra';

type Side = 'base' | 'agent';

/** hydra:/<path>?race=..&agent=..&side=base|agent; the path keeps the file's language. */
export function contentUri(raceId: string, agentId: string, path: string, side: Side): vscode.Uri {
  const query = new URLSearchParams({ race: raceId, agent: agentId, side }).toString();
  return vscode.Uri.from({ scheme: SCHEME, path: `/${path}`, query });
}

class AgentContentProvider implements vscode.TextDocumentContentProvider {
  // A result commit never changes, so both versions are fetched once.
  private readonly cache = new Map<string, Promise<proto.FileContentsResult>>();

  constructor(private readonly session: HydraSession) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const q = new URLSearchParams(uri.query);
    const raceId = q.get('race') ?? '';
    const agentId = q.get('agent') ?? '';
    const path = uri.path.replace(/^\//, '');
    const key = `${raceId}/${agentId}/${path}`;
    let pending = this.cache.get(key);
    if (!pending) {
      pending = this.session.requestOrThrow(proto.fileContents, { raceId, agentId, path });
      this.cache.set(key, pending);
      pending.catch(() => this.cache.delete(key));
    }
    try {
      const contents = await pending;
      const text = q.get('side') === 'base' ? contents.base : contents.agent;
      if (text === null) return '';
      if (contents.encoding === 'base64') return `(binary file, ${Buffer.from(text, 'base64').length} bytes)\n`;
      return text;
    } catch (error) {
      void vscode.window.showErrorMessage(`Hydra: ${describeServerError(error)}`);
      return '';
    }
  }
}

async function showDiff(session: HydraSession, arg: unknown): Promise<void> {
  const chosen = await resolveAgent(session, arg, 'diff');
  if (!chosen) return;
  const { race, agent } = chosen;
  let path = chosen.path;
  if (!path) {
    const result = await session.request(proto.diff, { raceId: race.raceId, agentId: agent.agentId });
    if (!result) return;
    if (result.files.length === 0) {
      void vscode.window.showInformationMessage(`Hydra: ${agent.agentId} changed no file.`);
      return;
    }
    path = result.files.length === 1 ? result.files[0].path : (await vscode.window.showQuickPick(
      result.files.map((f) => ({ label: f.path, description: `${f.status} +${f.additions} −${f.deletions}` })),
      { placeHolder: `A file ${agent.agentId} changed` }))?.label;
    if (!path) return;
  }
  const left = contentUri(race.raceId, agent.agentId, path, 'base');
  const right = contentUri(race.raceId, agent.agentId, path, 'agent');
  await vscode.commands.executeCommand('vscode.diff', left, right, `${path} (base ↔ ${agent.agentId})`, { preview: true });
}

export function activate(context: vscode.ExtensionContext, session: HydraSession): void {
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, new AgentContentProvider(session)),
    vscode.commands.registerCommand('hydra.showDiff', (arg?: unknown) => showDiff(session, arg)),
  );
}
