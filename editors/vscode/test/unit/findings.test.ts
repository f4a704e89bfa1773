import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileInWorktree, placeFindings } from '../../src/findings';
import type { CheckResult, Finding } from '../../src/protocol';

const worktree = '/repo/.hydra-workspaces/breaker-20261121-101500-a3f9';

function check(findings: Finding[]): CheckResult {
  return {
    command: 'sh build.sh', skipped: false, exitCode: 2, timedOut: false, durationMs: 5, output: '', outputTruncated: false,
    tests: null, lint: null, format: '', findings,
  };
}

test('a finding goes on the file in the agent worktree, at 0-based line and column', () => {
  const placed = placeFindings(worktree, {
    build: check([{ path: 'lib.sh', line: 3, column: 1, severity: 'error', message: '"fi" unexpected' }]),
    lint: check([{ path: 'src/a.sh', line: 10, severity: 'warning', message: 'unused' }]),
    tests: null,
  });
  assert.deepEqual(placed, [
    { file: `${worktree}/lib.sh`, check: 'build', line: 2, column: 0, severity: 'error', message: '"fi" unexpected' },
    { file: `${worktree}/src/a.sh`, check: 'lint', line: 9, column: undefined, severity: 'warning', message: 'unused' },
  ]);
});

test('findings naming a file outside the worktree, or no line, are left out', () => {
  const placed = placeFindings(worktree, {
    build: check([
      { path: '/usr/include/stdio.h', line: 4, severity: 'error', message: 'absolute: outside' },
      { path: '../main/lib.sh', line: 4, severity: 'error', message: 'climbs out' },
      { path: 'src/../../x.sh', line: 4, severity: 'error', message: 'climbs out too' },
      { path: 'lib.sh', line: 0, severity: 'error', message: 'no line' },
      { path: 'src/../lib.sh', line: 1, severity: 'error', message: 'inside after all' },
    ]),
    lint: null,
  });
  assert.deepEqual(placed.map((p) => p.message), ['inside after all']);
  assert.equal(placed[0].file, `${worktree}/lib.sh`);
  assert.equal(fileInWorktree(worktree, '..'), undefined);
  assert.equal(fileInWorktree(worktree, '.'), undefined);
  assert.equal(fileInWorktree('', 'lib.sh'), undefined);
});

test('checks without findings (not configured, or from a hydra that sends none) place nothing', () => {
  assert.deepEqual(placeFindings(worktree, { build: null, lint: null, tests: null }), []);
  assert.deepEqual(placeFindings(worktree, undefined), []);
  const { findings: _none, ...old } = check([]);
  assert.deepEqual(placeFindings(worktree, { build: old }), []);
});
