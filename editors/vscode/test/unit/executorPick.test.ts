import { test } from 'node:test';
import assert from 'node:assert/strict';
import { executorItems } from '../../src/executorPick';

test('nothing is asked when hydra offers one executor, or says nothing (an older hydra)', () => {
  assert.equal(executorItems(['local']), undefined);
  assert.equal(executorItems([]), undefined);
  assert.equal(executorItems(undefined), undefined);
});

test('the executors are offered in hydra\'s order, the default first and marked', () => {
  const items = executorItems(['slurm', 'local']);
  assert.deepEqual(items?.map((i) => i.executor), ['slurm', 'local']);
  assert.equal(items?.[0].description, 'default ([executor] kind)');
  assert.equal(items?.[1].description, '');
  assert.match(items?.[0].detail ?? '', /Slurm batch job/);
  assert.match(items?.[1].detail ?? '', /this machine/);
  assert.deepEqual(executorItems(['local', 'slurm'])?.map((i) => i.label), ['local', 'slurm']);
});

test('a kind this extension does not know is offered by its name', () => {
  assert.deepEqual(executorItems(['local', 'kubernetes'])?.[1], { label: 'kubernetes', description: '', detail: '', executor: 'kubernetes' });
});
