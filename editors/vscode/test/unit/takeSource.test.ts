import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type ShownDocument, takeLabel, takeSource } from '../../src/takeSource';

const doc = (agentId: string, side: 'base' | 'agent', owner?: string): ShownDocument =>
  ({ raceId: '20261121-101500-a3f9', agentId, path: 'cart.py', side, ...(owner ? { owner } : {}) });

test('in Show Diff the change is the agent\'s from either side, and nothing is compared', () => {
  assert.deepEqual(takeSource(doc('careful', 'agent'), doc('careful', 'base')), { agentId: 'careful' });
  assert.deepEqual(takeSource(doc('careful', 'base'), doc('careful', 'agent')), { agentId: 'careful' });
  // A Hydra document open alone (not in a diff).
  assert.deepEqual(takeSource(doc('careful', 'agent'), undefined), { agentId: 'careful' });
});

test('in a two-agent comparison the change is the agent of the cursor\'s side, and names the other', () => {
  assert.deepEqual(takeSource(doc('careful', 'agent'), doc('sprawler', 'agent')), { agentId: 'careful', comparedWith: 'sprawler' });
  assert.deepEqual(takeSource(doc('sprawler', 'agent'), doc('careful', 'agent')), { agentId: 'sprawler', comparedWith: 'careful' });
  // The other agent left the file alone: its side is the base, standing for it.
  assert.deepEqual(takeSource(doc('careful', 'agent'), doc('careful', 'base', 'sprawler')), { agentId: 'careful', comparedWith: 'sprawler' });
});

test('the side of a compared agent that left the file alone has no change to take, and says whose side has one', () => {
  assert.deepEqual(takeSource(doc('careful', 'base', 'sprawler'), doc('careful', 'agent')), { unchanged: 'sprawler', other: 'careful' });
});

test('a document of another race is no comparison', () => {
  const other = { ...doc('sprawler', 'agent'), raceId: '20261121-113000-0000' };
  assert.deepEqual(takeSource(doc('careful', 'agent'), other), { agentId: 'careful' });
});

test('the take names its source agent', () => {
  assert.equal(takeLabel('careful'), "Take careful's change");
});
