// Diffs in VS Code's own diff editor: the base and the agent's version of a
// file are documents of the `hydra:` scheme, served from hydra/diff (git's
// objects, never a worktree that may still change), so they are read-only.
// "Show Diff" puts the base on the left and the agent's version on the
// right; "Compare Agents" two agents' versions side by side. "Show All
// Changes" and "Compare All Changes" show every file of either at once, in
// VS Code's changes editor (changeList.ts says what goes on each side).
import * as vscode from 'vscode';
import * as proto from './protocol';
import type { HydraSession } from './session';
import { byRank, describeServerError, raceIsActive, visibleControls } from './format';
import { ensureRankings, pickAgent, pickRace, resolveAgent, resultsOf, targetOf } from './pick';
import { isCollab } from './collabModel';
import type { ShownDocument } from './takeSource';
import { agentChangeList, type ChangeEntry, comparisonChangeList, type FileVersion } from './changeList';

export const SCHEME = 'hydra';

export type Side = 'base' | 'agent';

/**
 * hydra:/<path>?race=..&agent=..&side=base|agent[&for=..]; the path keeps the
 * file's language. `owner`: in a comparison, the agent a base version stands
 * for (one that left the file alone).
 */
export function contentUri(raceId: string, agentId: string, path: string, side: Side, owner?: string): vscode.Uri {
  const query = new URLSearchParams({ race: raceId, agent: agentId, side, ...(owner ? { for: owner } : {}) }).toString();
  return vscode.Uri.from({ scheme: SCHEME, path: `/${path}`, query });
}

/** What a `hydra:` document shows: which race, agent and file, and which side. */
export function parseContentUri(uri: vscode.Uri): ShownDocument | undefined {
  if (uri.scheme !== SCHEME) return undefined;
  const q = new URLSearchParams(uri.query);
  const raceId = q.get('race');
  const agentId = q.get('agent');
  if (!raceId || !agentId) return undefined;
  const side = q.get('side') === 'base' ? 'base' : 'agent';
  const owner = side === 'base' ? q.get('for') ?? undefined : undefined;
  return { raceId, agentId, path: uri.path.replace(/^\//, ''), side, ...(owner ? { owner } : {}) };
}

class AgentContentProvider implements vscode.TextDocumentContentProvider {
  // A result commit never changes, so both versions are fetched once.
  private readonly cache = new Map<string, Promise<proto.FileContentsResult>>();

  constructor(private readonly session: HydraSession) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const shown = parseContentUri(uri);
    if (!shown) return '';
    const { raceId, agentId, path } = shown;
    const key = `${raceId}/${agentId}/${path}`;
    let pending = this.cache.get(key);
    if (!pending) {
      pending = this.session.requestOrThrow(proto.fileContents, { raceId, agentId, path });
      this.cache.set(key, pending);
      pending.catch(() => this.cache.delete(key));
    }
    try {
      const contents = await pending;
      const text = shown.side === 'base' ? contents.base : contents.agent;
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
  // A collaboration's diffs are its iterations' (builder@N).
  const chosen = await resolveAgent(session, arg, 'diff', true);
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
      result.files.map((f) => ({ label: visibleControls(f.path), path: f.path, description: `${f.status} +${f.additions} −${f.deletions}` })),
      { placeHolder: `A file ${agent.agentId} changed` }))?.path;
    if (!path) return;
  }
  const left = contentUri(race.raceId, agent.agentId, path, 'base');
  const right = contentUri(race.raceId, agent.agentId, path, 'agent');
  await vscode.commands.executeCommand('vscode.diff', left, right, `${visibleControls(path)} (base ↔ ${agent.agentId})`, { preview: true });
}

/** The files an agent changed; none when it left no result (NoResult), undefined when hydra refused otherwise. */
async function changesOf(session: HydraSession, raceId: string, agentId: string): Promise<proto.FileChange[] | undefined> {
  const since = session.messagesSoFar;
  try {
    return (await session.requestOrThrow(proto.diff, { raceId, agentId })).files;
  } catch (error) {
    if ((error as { code?: unknown }).code === proto.ErrorCodes.NoResult) return [];
    void session.showError(error, since);
    return undefined;
  }
}

const versionUri = (raceId: string, v: FileVersion | undefined) => v && contentUri(raceId, v.agentId, v.path, v.side, v.owner);

/** Opens `entries` in VS Code's changes editor (the multi-file diff). */
async function openChanges(title: string, raceId: string, entries: ChangeEntry[]): Promise<void> {
  // Each file as [what names it, its left side, its right side]; a side it does not exist on is undefined.
  const resources = entries.flatMap((e) => {
    const original = versionUri(raceId, e.original);
    const modified = versionUri(raceId, e.modified);
    const named = modified ?? original;
    return named ? [[named, original, modified]] : [];
  });
  await vscode.commands.executeCommand('vscode.changes', title, resources);
}

/** Every file an agent changed, at once: the base on the left, its version on the right. */
async function showAllChanges(session: HydraSession, arg: unknown): Promise<void> {
  const chosen = await resolveAgent(session, arg, 'show all changes of', true);
  if (!chosen) return;
  const { race, agent } = chosen;
  const files = await changesOf(session, race.raceId, agent.agentId);
  if (!files) return;
  if (files.length === 0) {
    void vscode.window.showInformationMessage(`Hydra: ${agent.agentId} changed no file.`);
    return;
  }
  await openChanges(`All changes (base ↔ ${agent.agentId})`, race.raceId, agentChangeList(agent.agentId, files));
}

/**
 * Two agents to compare: a race, two of its agents (a collaboration's: two
 * of its iterations), offered by rank, and the files each changed. `a` is
 * the better ranked: the left side, as the scoreboard lists them.
 */
async function pickComparison(session: HydraSession, arg: unknown)
  : Promise<{ raceId: string; a: string; b: string; changedByA: proto.FileChange[]; changedByB: proto.FileChange[] } | undefined> {
  const target = targetOf(arg);
  const race = (target ? session.store.get(target.raceId) : undefined) ?? await pickRace(session, 'The race whose agents to compare',
    (r) => !raceIsActive(r.state) && resultsOf(r).length >= 2, 'no finished race has two agents to compare');
  if (!race) return undefined;
  const agents = resultsOf(race);
  if (agents.length < 2) {
    void vscode.window.showInformationMessage(isCollab(race)
      ? `Hydra: collaboration ${race.raceId} has ${agents.length === 0 ? 'no iteration' : 'one iteration'}: nothing to compare.`
      : `Hydra: race ${race.raceId} has one agent: nothing to compare it with.`);
    return undefined;
  }
  const first = agents.find((a) => a.agentId === target?.agentId) ?? await pickAgent(session, race, 'The first agent to compare', agents);
  if (!first) return undefined;
  const second = await pickAgent(session, race, `The agent to compare with ${first.agentId}`,
    agents.filter((a) => a.agentId !== first.agentId));
  if (!second) return undefined;
  await ensureRankings(session, race);
  const [a, b] = byRank([first, second], (id) => session.store.rankingOf(race.raceId, id)?.rank).map((x) => x.agentId);
  const [changedByA, changedByB] = await Promise.all([changesOf(session, race.raceId, a), changesOf(session, race.raceId, b)]);
  if (!changedByA || !changedByB) return undefined;
  if (changedByA.length === 0 && changedByB.length === 0) {
    void vscode.window.showInformationMessage(`Hydra: neither ${a} nor ${b} changed a file.`);
    return undefined;
  }
  return { raceId: race.raceId, a, b, changedByA, changedByB };
}

/**
 * Two agents' versions side by side: of one of the files either changed
 * (`all` false: Compare Agents), or of all of them at once (Compare All
 * Changes). An agent that did not change a file shows the base's version of it.
 */
async function compareAgents(session: HydraSession, arg: unknown, all: boolean): Promise<void> {
  const picked = await pickComparison(session, arg);
  if (!picked) return;
  const { raceId, a, b, changedByA, changedByB } = picked;
  const entries = comparisonChangeList(a, changedByA, b, changedByB);
  if (all) {
    await openChanges(`All changes (${a} ↔ ${b})`, raceId, entries);
    return;
  }
  const who = (p: string) => [a, b].filter((_, i) => [changedByA, changedByB][i].some((f) => f.path === p));
  const entry = entries.length === 1 ? entries[0] : (await vscode.window.showQuickPick(
    entries.map((e) => ({ label: visibleControls(e.path), entry: e, description: `changed by ${who(e.path).join(' and ')}` })),
    { placeHolder: `A file ${a} or ${b} changed`, matchOnDescription: true }))?.entry;
  if (!entry) return;
  // A side without the file is shown empty: the base's version of it, which hydra serves as nothing.
  const side = (v: FileVersion | undefined, agentId: string, other: string) =>
    versionUri(raceId, v) ?? contentUri(raceId, other, entry.path, 'base', agentId);
  await vscode.commands.executeCommand('vscode.diff', side(entry.original, a, b), side(entry.modified, b, a),
    `${visibleControls(entry.path)} (${a} ↔ ${b})`, { preview: true });
}

export function activate(context: vscode.ExtensionContext, session: HydraSession): void {
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, new AgentContentProvider(session)),
    vscode.commands.registerCommand('hydra.showDiff', (arg?: unknown) => showDiff(session, arg)),
    vscode.commands.registerCommand('hydra.compareAgents', (arg?: unknown) => compareAgents(session, arg, false)),
    vscode.commands.registerCommand('hydra.showAllChanges', (arg?: unknown) => showAllChanges(session, arg)),
    vscode.commands.registerCommand('hydra.compareAllChanges', (arg?: unknown) => compareAgents(session, arg, true)),
  );
}
