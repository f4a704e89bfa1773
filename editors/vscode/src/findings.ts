// Where a scored agent's build and lint findings belong: the file each one
// names, in the agent's worktree (hydra names a file inside the worktree
// relative to it). A finding that names a file outside the worktree (an
// absolute path, or one that climbs out with '..') has no place there and is
// left out. No VS Code imports: the unit tests run it under plain Node.
import * as path from 'path';
import type { CheckSet } from './protocol';

export interface PlacedFinding {
  /** The file in the agent's worktree, absolute. */
  file: string;
  check: 'build' | 'lint';
  /** 0-based. */
  line: number;
  /** 0-based; undefined when the tool named no column. */
  column?: number;
  severity: 'error' | 'warning';
  message: string;
}

/** The file `relative` names in `worktree`; undefined when it is not inside it. */
export function fileInWorktree(worktree: string, relative: string): string | undefined {
  if (!worktree || !relative || path.isAbsolute(relative)) return undefined;
  const file = path.resolve(worktree, relative);
  const back = path.relative(path.resolve(worktree), file);
  if (back === '' || back === '..' || back.startsWith(`..${path.sep}`) || path.isAbsolute(back)) return undefined;
  return file;
}

/** The findings of an agent's build and lint checks that name a line of a file in its worktree. */
export function placeFindings(worktree: string, checks: Partial<CheckSet> | undefined): PlacedFinding[] {
  const placed: PlacedFinding[] = [];
  for (const check of ['build', 'lint'] as const) {
    for (const f of checks?.[check]?.findings ?? []) {
      const file = fileInWorktree(worktree, f.path);
      if (!file || !Number.isInteger(f.line) || f.line < 1) continue;
      placed.push({
        file,
        check,
        line: f.line - 1,
        column: f.column !== undefined && f.column >= 1 ? f.column - 1 : undefined,
        severity: f.severity === 'warning' ? 'warning' : 'error',
        message: f.message,
      });
    }
  }
  return placed;
}
