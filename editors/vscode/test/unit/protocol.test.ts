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

// protocol/params.json lists the members of each request's params, held to the
// server's described structs by tests/protocol/wire_fields_test.cpp; the
// interface protocol.ts sends for that request names the same members.
const params: Record<string, string[]> = JSON.parse(
  fs.readFileSync(path.join(repo, 'protocol/params.json'), 'utf8'),
);

function interfaceMembers(name: string): string[] {
  const start = mirror.search(new RegExp(`export interface ${name} \\{`));
  assert.ok(start >= 0, `protocol.ts declares interface ${name}`);
  let depth = 0;
  let end = mirror.indexOf('{', start);
  for (let i = end; i < mirror.length; i++) {
    if (mirror[i] === '{') depth++;
    if (mirror[i] === '}' && --depth === 0) {
      end = i;
      break;
    }
  }
  const body = mirror
    .slice(mirror.indexOf('{', start) + 1, end)
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '');
  return [...body.matchAll(/(?:^|[;\n])\s*(\w+)\??\s*:/g)].map((m) => m[1]);
}

test('every request sends the params members protocol/params.json lists', () => {
  const requests = [...mirror.matchAll(/new RequestType<(\w+), \w+, void>\('(hydra\/\w+)'\)/g)];
  assert.ok(requests.length >= 15, `read ${requests.length} requests from protocol.ts`);
  for (const [, paramsType, method] of requests) {
    assert.ok(method in params, `${method} is in protocol/params.json`);
    assert.deepEqual(interfaceMembers(paramsType).sort(), [...params[method]].sort(), `${paramsType} (${method})`);
  }
});
