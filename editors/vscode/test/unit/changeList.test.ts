import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agentChangeList, comparisonChangeList } from '../../src/changeList';
import type { FileChange } from '../../src/protocol';

const change = (path: string, status: FileChange['status'], oldPath?: string): FileChange =>
  ({ path, status, additions: 1, deletions: 1, binary: false, ...(oldPath ? { oldPath } : {}) });

test('all of an agent\'s changes: the base on the left, its version on the right, by path', () => {
  assert.deepEqual(agentChangeList('fixer', [change('lib.sh', 'modified'), change('CHANGELOG.md', 'added'), change('old.txt', 'deleted')]), [
    // Added: nothing on the left, so the editor shows it added rather than emptied from something.
    { path: 'CHANGELOG.md', modified: { agentId: 'fixer', path: 'CHANGELOG.md', side: 'agent' } },
    { path: 'lib.sh', original: { agentId: 'fixer', path: 'lib.sh', side: 'base' }, modified: { agentId: 'fixer', path: 'lib.sh', side: 'agent' } },
    // Deleted: nothing on the right.
    { path: 'old.txt', original: { agentId: 'fixer', path: 'old.txt', side: 'base' } },
  ]);
  assert.deepEqual(agentChangeList('fixer', []), []);
});

test('a renamed file is one entry under its new name, the base (served for the new name) on the left', () => {
  assert.deepEqual(agentChangeList('mover', [change('src/new.c', 'renamed', 'src/old.c')]), [
    { path: 'src/new.c', original: { agentId: 'mover', path: 'src/new.c', side: 'base' }, modified: { agentId: 'mover', path: 'src/new.c', side: 'agent' } },
  ]);
});

test('two agents: each one\'s version of every file either changed; the base stands for one that left a file alone', () => {
  const fixer = [change('lib.sh', 'modified'), change('CHANGELOG.md', 'added')];
  const breaker = [change('lib.sh', 'modified'), change('README.md', 'deleted')];
  assert.deepEqual(comparisonChangeList('fixer', fixer, 'breaker', breaker), [
    // Only the fixer added it: the breaker has no such file.
    { path: 'CHANGELOG.md', original: { agentId: 'fixer', path: 'CHANGELOG.md', side: 'agent' } },
    // Only the breaker deleted it: the fixer's is the base's, fetched through the breaker, standing for the fixer.
    { path: 'README.md', original: { agentId: 'breaker', path: 'README.md', side: 'base', owner: 'fixer' } },
    { path: 'lib.sh', original: { agentId: 'fixer', path: 'lib.sh', side: 'agent' }, modified: { agentId: 'breaker', path: 'lib.sh', side: 'agent' } },
  ]);
});

test('two agents: a file renamed away is gone from that agent; a file both deleted is left out', () => {
  const mover = [change('b.txt', 'renamed', 'a.txt'), change('gone.txt', 'deleted')];
  const editor = [change('a.txt', 'modified'), change('gone.txt', 'deleted')];
  assert.deepEqual(comparisonChangeList('mover', mover, 'editor', editor), [
    { path: 'a.txt', modified: { agentId: 'editor', path: 'a.txt', side: 'agent' } },
    // The editor left b.txt alone, and the base has no b.txt: nothing on its side.
    { path: 'b.txt', original: { agentId: 'mover', path: 'b.txt', side: 'agent' } },
  ]);
});
