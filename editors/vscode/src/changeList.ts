// What "Show All Changes" and "Compare All Changes" put in VS Code's changes
// editor (the multi-file diff): one entry per file, each with the version on
// its left and on its right. A side a file does not exist on is absent (an
// added file has no left, a deleted one no right), so the editor shows it as
// added or deleted rather than as emptied. No VS Code imports: the unit
// tests run it under plain Node.
import type { FileChange } from './protocol';

/** One version of a file, as diff.ts' contentUri names it. */
export interface FileVersion {
  agentId: string;
  path: string;
  side: 'base' | 'agent';
  /** In a comparison, the agent a base version stands for: one that left the file alone. */
  owner?: string;
}

export interface ChangeEntry {
  /** The file's path (a renamed file's new one). */
  path: string;
  original?: FileVersion;
  modified?: FileVersion;
}

/** Everything an agent changed: the base on the left, its version on the right; by path. */
export function agentChangeList(agentId: string, files: FileChange[]): ChangeEntry[] {
  return [...files].sort((x, y) => compare(x.path, y.path)).map((f) => ({
    path: f.path,
    ...(f.status === 'added' ? {} : { original: { agentId, path: f.path, side: 'base' as const } }),
    ...(f.status === 'deleted' ? {} : { modified: { agentId, path: f.path, side: 'agent' as const } }),
  }));
}

/**
 * Agent `a`'s version (left) and `b`'s (right) of every file either changed,
 * by path. An agent that left a file alone shows the base's version of it,
 * standing for it; one that deleted it, or renamed it away, has none, and
 * neither does one that left alone a file only the other added. A file
 * both deleted is the same on both sides: it is left out.
 */
export function comparisonChangeList(a: string, changedByA: FileChange[], b: string, changedByB: FileChange[]): ChangeEntry[] {
  const paths = [...new Set([...changedByA, ...changedByB].map((f) => f.path))].sort(compare);
  return paths.flatMap((path) => {
    const original = versionOf(a, changedByA, b, changedByB, path);
    const modified = versionOf(b, changedByB, a, changedByA, path);
    if (!original && !modified) return [];
    return [{ path, ...(original ? { original } : {}), ...(modified ? { modified } : {}) }];
  });
}

/** `agentId`'s version of `path`, given what it and the other agent changed. */
function versionOf(agentId: string, own: FileChange[], other: string, others: FileChange[], path: string): FileVersion | undefined {
  const change = own.find((f) => f.path === path);
  if (change) return change.status === 'deleted' ? undefined : { agentId, path, side: 'agent' };
  // Renamed away: the file is gone from this agent's tree.
  if (own.some((f) => f.oldPath === path)) return undefined;
  // Left alone: the base's version, when the base has the file (the other agent did not add it).
  const otherChange = others.find((f) => f.path === path);
  if (otherChange && (otherChange.status === 'added' || otherChange.oldPath !== undefined)) return undefined;
  return { agentId: other, path, side: 'base', owner: agentId };
}

function compare(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}
