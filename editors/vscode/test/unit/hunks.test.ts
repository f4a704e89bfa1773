import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffLines, hunkAt, positionOf, splitLines, takeHunk, textEdit } from '../../src/hunks';

const base = splitLines('# Arithmetic helpers.\n\nadd() {\n  echo $(( $1 - $2 ))\n}\n\ntwice() {\n  add "$1" "$1"\n}\n');
// Two places: the comment at the top, and add()'s body.
const agent = splitLines('# Arithmetic helpers, checked.\n\nadd() {\n  echo $(( $1 + $2 ))\n}\n\ntwice() {\n  add "$1" "$1"\n}\n');

test('diffLines gives each changed run of lines as a hunk, without context', () => {
  assert.deepEqual(diffLines(base, agent), [
    { baseStart: 0, baseEnd: 1, agentStart: 0, agentEnd: 1 },
    { baseStart: 3, baseEnd: 4, agentStart: 3, agentEnd: 4 },
  ]);
  assert.deepEqual(diffLines(base, base), []);
});

test('diffLines finds insertions and removals in the middle of a file', () => {
  const a = ['a', 'b', 'c', 'd', 'e'];
  const b = ['a', 'x', 'y', 'c', 'e', 'f'];
  assert.deepEqual(diffLines(a, b), [
    { baseStart: 1, baseEnd: 2, agentStart: 1, agentEnd: 3 },
    { baseStart: 3, baseEnd: 4, agentStart: 4, agentEnd: 4 },
    { baseStart: 5, baseEnd: 5, agentStart: 5, agentEnd: 6 },
  ]);
  // Applying the hunks rebuilds the agent's version.
  const rebuilt = [...a];
  for (const h of diffLines(a, b).reverse()) rebuilt.splice(h.baseStart, h.baseEnd - h.baseStart, ...b.slice(h.agentStart, h.agentEnd));
  assert.deepEqual(rebuilt, b);
  assert.deepEqual(diffLines([], ['x']), [{ baseStart: 0, baseEnd: 0, agentStart: 0, agentEnd: 1 }]);
});

test('diffLines on files that differ in more lines than it compares gives one hunk for what lies between', () => {
  const a = Array.from({ length: 3000 }, (_, i) => `a${i}`);
  const b = Array.from({ length: 3000 }, (_, i) => `b${i}`);
  assert.deepEqual(diffLines(['same', ...a, 'end'], ['same', ...b, 'end']),
    [{ baseStart: 1, baseEnd: 3001, agentStart: 1, agentEnd: 3001 }]);
});

test('lines added next to lines like them are placed as a reader sees them', () => {
  // A function added at the end, after a blank line: blank, function, closing brace; not "}, blank, function".
  const polished = splitLines('# Arithmetic helpers, polished.\n\nadd() {\n  echo $(( $1 - $2 ))\n}\n\ntwice() {\n  add "$1" "$1"\n}\n\nhalf() {\n  echo $(( $1 / 2 ))\n}\n');
  assert.deepEqual(diffLines(base, polished), [
    { baseStart: 0, baseEnd: 1, agentStart: 0, agentEnd: 1 },
    { baseStart: 9, baseEnd: 9, agentStart: 9, agentEnd: 13 },
  ]);
  // The same, removed.
  assert.deepEqual(diffLines(polished, base)[1], { baseStart: 9, baseEnd: 13, agentStart: 9, agentEnd: 9 });
});

test('on random texts, the hunks rebuild the agent version, keep an unchanged line between them, and each can be taken alone', () => {
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const text = () => Array.from({ length: random(12) }, () => ['', '}', 'a', 'b'][random(4)]);
  for (let round = 0; round < 500; round++) {
    const a = text();
    const b = text();
    const hunks = diffLines(a, b);
    const rebuilt = [...a];
    for (const h of [...hunks].reverse()) rebuilt.splice(h.baseStart, h.baseEnd - h.baseStart, ...b.slice(h.agentStart, h.agentEnd));
    assert.deepEqual(rebuilt, b, `${JSON.stringify(a)} -> ${JSON.stringify(b)}`);
    let [i, j] = [0, 0];
    for (const h of hunks) {
      assert.equal(h.baseStart - i, h.agentStart - j, 'as many unchanged lines before it on both sides');
      assert.ok(i === 0 && j === 0 ? true : h.baseStart > i, 'an unchanged line between two hunks');
      for (let k = 0; k < h.baseStart - i; k++) assert.equal(a[i + k], b[j + k]);
      [i, j] = [h.baseEnd, h.agentEnd];
    }
    for (const h of hunks) {
      const taken = takeHunk(a, b, h, a);
      assert.ok('lines' in taken, `${JSON.stringify(a)} -> ${JSON.stringify(b)}`);
      assert.deepEqual(takeHunk(a, b, h, taken.lines), { problem: 'taken' });
    }
  }
});

test('hunkAt picks the hunk under a line of either side; a removal by the line before or after it', () => {
  const hunks = diffLines(['a', 'b', 'c', 'd', 'e'], ['a', 'x', 'y', 'c', 'e']);
  assert.deepEqual(hunkAt(hunks, 2, 'agent'), hunks[0]);
  assert.deepEqual(hunkAt(hunks, 1, 'base'), hunks[0]);
  assert.equal(hunkAt(hunks, 0, 'agent'), undefined);
  // 'd' was removed: between the agent's lines 3 ('c') and 4 ('e').
  assert.deepEqual(hunkAt(hunks, 4, 'agent'), hunks[1]);
  assert.deepEqual(hunkAt(hunks, 3, 'base'), hunks[1]);
});

test('takeHunk takes one hunk of two into a file as it was at the base, and only it', () => {
  const [first, second] = diffLines(base, agent);
  const taken = takeHunk(base, agent, second, base);
  assert.ok('lines' in taken);
  assert.equal(taken.lines.join('\n'), '# Arithmetic helpers.\n\nadd() {\n  echo $(( $1 + $2 ))\n}\n\ntwice() {\n  add "$1" "$1"\n}\n');
  assert.equal(taken.at, 3);
  // Then the other: the file is the agent's version.
  const both = takeHunk(base, agent, first, taken.lines);
  assert.ok('lines' in both);
  assert.deepEqual(both.lines, agent);
});

test("takeHunk finds the lines where the user's own edits moved them", () => {
  const [, second] = diffLines(base, agent);
  const edited = ['#!/bin/sh', '# by hand', ...base];
  const taken = takeHunk(base, agent, second, edited);
  assert.ok('lines' in taken);
  assert.equal(taken.at, 5);
  // The comment at the top stays the user's: only add()'s body is the agent's.
  assert.deepEqual(taken.lines, ['#!/bin/sh', '# by hand', base[0], ...agent.slice(1)]);
});

test('takeHunk refuses lines the user changed, and says when the change is there already', () => {
  const [first, second] = diffLines(base, agent);
  const mine = [...base];
  mine[3] = '  echo $(( $2 + $1 ))';
  assert.deepEqual(takeHunk(base, agent, second, mine), { problem: 'conflict' });
  // The other hunk does not touch the user's line.
  assert.ok('lines' in takeHunk(base, agent, first, mine));
  const once = takeHunk(base, agent, second, base);
  assert.ok('lines' in once);
  assert.deepEqual(takeHunk(base, agent, second, once.lines), { problem: 'taken' });
});

test('takeHunk of a file the agent added writes its lines into an empty one', () => {
  const added = splitLines('# Changes\n\n- add() adds.\n');
  const [hunk] = diffLines(splitLines(''), added);
  const taken = takeHunk(splitLines(''), added, hunk, splitLines(''));
  assert.ok('lines' in taken);
  assert.equal(taken.lines.join('\n'), '# Changes\n\n- add() adds.\n');
});

test('textEdit and positionOf give the one edit between two texts, by line and character', () => {
  const before = 'a\nbc\nd\n';
  const after = 'a\nbXc\nd\n';
  const edit = textEdit(before, after);
  assert.deepEqual(edit, { start: 3, end: 3, text: 'X' });
  assert.deepEqual(positionOf(before, edit.start), { line: 1, character: 1 });
  assert.deepEqual(textEdit('same', 'same'), { start: 4, end: 4, text: '' });
  assert.deepEqual(positionOf('a\nb\n', 4), { line: 2, character: 0 });
});
