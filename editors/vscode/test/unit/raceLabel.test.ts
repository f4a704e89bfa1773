import { test } from 'node:test';
import assert from 'node:assert/strict';
import { raceRowDescription, shortIds, startedText } from '../../src/raceLabel';

test('a short id is the id\'s first 8 characters when no other race begins with them', () => {
  const shorts = shortIds(['20261121-101500-a3f9', '20261120-093000-1c2d']);
  assert.equal(shorts.get('20261121-101500-a3f9'), '20261121');
  assert.equal(shorts.get('20261120-093000-1c2d'), '20261120');
});

test('a short id grows until no other race begins with it, as hydra needs to resolve it', () => {
  const ids = ['20261121-101500-a3f9', '20261121-101500-a4c0', '20261121-113000-0000', '20261120-093000-1c2d'];
  const shorts = shortIds(ids);
  assert.equal(shorts.get('20261121-101500-a3f9'), '20261121-101500-a3');
  assert.equal(shorts.get('20261121-101500-a4c0'), '20261121-101500-a4');
  assert.equal(shorts.get('20261121-113000-0000'), '20261121-11');
  assert.equal(shorts.get('20261120-093000-1c2d'), '20261120');
  for (const id of ids) {
    const short = shorts.get(id) ?? '';
    assert.deepEqual(ids.filter((other) => other.startsWith(short)), [id]);
  }
});

test('a lone race, or an id shorter than 8 characters, keeps what it has', () => {
  assert.equal(shortIds(['20261121-101500-a3f9']).get('20261121-101500-a3f9'), '20261121');
  assert.equal(shortIds(['abc', 'abd']).get('abc'), 'abc');
});

test('the start time says the day only when it is not today, and the year only when it is not this year', () => {
  const now = new Date(2026, 10, 28, 15, 0);
  assert.equal(startedText(new Date(2026, 10, 28, 9, 5).toISOString(), now), '09:05');
  assert.equal(startedText(new Date(2026, 10, 21, 10, 15).toISOString(), now), 'Nov 21 10:15');
  assert.equal(startedText(new Date(2025, 0, 3, 23, 59).toISOString(), now), '2025 Jan 3 23:59');
  assert.equal(startedText('not a time', now), undefined);
  assert.equal(startedText(undefined, now), undefined);
});

test('two races of the same task read apart by start time, winner and short id', () => {
  const now = new Date(2026, 10, 28, 15, 0);
  const first = raceRowDescription({ createdAt: new Date(2026, 10, 28, 10, 15).toISOString() },
    { state: 'completed', winner: 'careful', shortId: '20261128-10' }, now);
  const second = raceRowDescription({ createdAt: new Date(2026, 10, 28, 11, 40).toISOString() },
    { state: 'completed', winner: 'sprawler', shortId: '20261128-11' }, now);
  assert.equal(first, 'completed · 10:15 · winner careful · 20261128-10');
  assert.equal(second, 'completed · 11:40 · winner sprawler · 20261128-11');
});

test('a merged race names the agent merged, one without a winner says so, a running one has no winner yet', () => {
  const now = new Date(2026, 10, 28, 15, 0);
  const createdAt = new Date(2026, 10, 28, 10, 15).toISOString();
  const merged = { agentId: 'careful', targetBranch: 'main', outcome: 'merged', mergedAt: createdAt } as const;
  assert.equal(raceRowDescription({ createdAt, merged }, { state: 'completed', winner: 'careful', shortId: '20261128' }, now),
    'completed · 10:15 · merged careful into main · 20261128');
  assert.equal(raceRowDescription({ createdAt }, { state: 'failed', winner: null, allFailed: true, shortId: '20261128' }, now),
    'failed · 10:15 · All agents failed: no winner · 20261128');
  // A collaboration whose builder completed but whose rounds all scored too low.
  assert.equal(raceRowDescription({ createdAt }, { state: 'completed', allFailed: true, collab: true, shortId: '20261128' }, now),
    'completed · 10:15 · No round scored well enough: no result to merge · 20261128');
  assert.equal(raceRowDescription({ createdAt }, { state: 'running', shortId: '20261128' }, now), 'running · 10:15 · 20261128');
});
