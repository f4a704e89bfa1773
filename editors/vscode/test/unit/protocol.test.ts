import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

// protocol.ts mirrors protocol/methods.h: every hydra/* name the server
// declares is spelled the same in the extension, and no other.
const repo = path.join(__dirname, '../../../../..');
const header = fs.readFileSync(path.join(repo, 'protocol/methods.h'), 'utf8');
const mirror = fs.readFileSync(path.join(repo, 'editors/vscode/src/protocol.ts'), 'utf8');

test('every hydra/* method and notification of methods.h is in protocol.ts', () => {
  const declared = new Set([...header.matchAll(/"(hydra\/\w+)"/g)].map((m) => m[1]));
  const mirrored = new Set([...mirror.matchAll(/'(hydra\/\w+)'/g)].map((m) => m[1]));
  assert.ok(declared.size >= 16, `methods.h declares ${declared.size} hydra names`);
  assert.deepEqual([...mirrored].sort(), [...declared].sort());
});
