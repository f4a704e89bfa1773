import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RaceStore } from '../../src/raceStore';

function started(clock: { t: number }) {
  const store = new RaceStore(() => clock.t);
  store.raceStarted('fix add()', {
    raceId: '20261121-101500-a3f9',
    agents: [
      { agentId: 'fixer', agent: 'fixer', branch: 'hydra/fixer-x', worktree: '/w/fixer' },
      { agentId: 'breaker', agent: 'breaker', branch: 'hydra/breaker-x', worktree: '/w/breaker' },
    ],
  });
  return store;
}

test('a started race lists its agents as queued and counts as running', () => {
  const store = started({ t: 1000 });
  const race = store.get('20261121-101500-a3f9');
  assert.equal(race?.state, 'running');
  assert.deepEqual(race?.agents.map((a) => a.state), ['queued', 'queued']);
  assert.equal(store.running().length, 1);
});

test('notifications move agents and the race through their states', () => {
  const clock = { t: 1000 };
  const store = started(clock);
  let changes = 0;
  store.onDidChange(() => changes++);
  const raceId = '20261121-101500-a3f9';
  store.agentStarted({ raceId, agentId: 'fixer', agent: 'fixer', branch: 'b', worktree: 'w' });
  clock.t = 3500;
  assert.equal(store.elapsedMs(raceId, 'fixer'), 2500, 'a running agent ticks on the local clock');
  store.agentFinished({ raceId, agentId: 'fixer', status: 'completed', exitCode: 0, durationMs: 2400 });
  clock.t = 9000;
  assert.equal(store.elapsedMs(raceId, 'fixer'), 2400, "a finished agent keeps hydra's duration");
  store.agentFinished({ raceId, agentId: 'breaker', status: 'failed', exitCode: 2, durationMs: 100, error: 'exit 2' });
  store.scoringStarted(raceId);
  assert.equal(store.get(raceId)?.state, 'scoring');
  assert.equal(store.running().length, 1, 'a race being scored still runs');
  const ranking = {
    rank: 1, agentId: 'fixer', agent: 'fixer', status: 'completed', total: 92,
    breakdown: { build: 100, tests: 100, lint: null, diffSize: 90, speed: 70 },
    checks: { build: null, tests: null, lint: null }, diff: { linesAdded: 1, linesRemoved: 1, filesChanged: 1 }, eligible: true,
  };
  store.raceFinished({ raceId, status: 'completed', rankings: [ranking], winner: 'fixer', autoMergeEligible: true, allFailed: false });
  assert.equal(store.get(raceId)?.state, 'completed');
  assert.equal(store.running().length, 0);
  assert.equal(store.rankingOf(raceId, 'fixer')?.total, 92);
  assert.equal(store.get(raceId)?.agents[1].error, 'exit 2');
  assert.equal(changes, 5);
});

test('notifications about unknown races change nothing', () => {
  const store = new RaceStore();
  let changes = 0;
  store.onDidChange(() => changes++);
  store.agentStarted({ raceId: 'nope', agentId: 'a', agent: 'a', branch: 'b', worktree: 'w' });
  store.agentFinished({ raceId: 'nope', agentId: 'a', status: 'completed', exitCode: 0, durationMs: 1 });
  assert.equal(changes, 0);
  assert.deepEqual(store.list(), []);
});

test('summaries replace what is known and list newest first', () => {
  const store = new RaceStore(() => 10_000);
  const summary = (raceId: string, state: 'running' | 'completed') => ({
    raceId, task: raceId, state, createdAt: '', baseCommit: 'c',
    agents: [{ agentId: 'a', agent: 'a', state: state === 'running' ? 'running' as const : 'completed' as const, elapsedMs: 4000, branch: 'b', worktree: 'w' }],
  });
  store.setSummaries([summary('20261120-090000-aaaa', 'completed'), summary('20261121-090000-bbbb', 'running')]);
  assert.deepEqual(store.list().map((r) => r.raceId), ['20261121-090000-bbbb', '20261120-090000-aaaa']);
  assert.equal(store.elapsedMs('20261121-090000-bbbb', 'a'), 4000);
});

function ranking(rank: number, agentId: string) {
  return {
    rank, agentId, agent: agentId, status: 'completed', total: 100 - rank,
    breakdown: { build: 100, tests: 100, lint: null, diffSize: 90, speed: 70 },
    checks: { build: null, tests: null, lint: null }, diff: { linesAdded: 1, linesRemoved: 1, filesChanged: 1 }, eligible: true,
  };
}

test("a race's scores give its agents' ranks and its winner", () => {
  const store = started({ t: 0 });
  const raceId = '20261121-101500-a3f9';
  assert.equal(store.hasRankings(raceId), false);
  store.setScores(raceId, { rankings: [ranking(1, 'fixer'), ranking(2, 'breaker')], winner: 'fixer' });
  assert.equal(store.hasRankings(raceId), true);
  assert.equal(store.winnerOf(raceId), 'fixer');
  assert.equal(store.rankingOf(raceId, 'breaker')?.rank, 2);
  assert.equal(store.allFailedIn(raceId), false);
});

test('a race in which every agent failed is known as such, from its summary or its scores', () => {
  const store = new RaceStore(() => 0);
  const summary = (raceId: string, allFailed: boolean) => ({
    raceId, task: raceId, state: 'completed' as const, createdAt: '', baseCommit: 'c', agents: [], allFailed,
  });
  store.setSummaries([summary('20261120-090000-aaaa', true), summary('20261121-090000-bbbb', false)]);
  assert.equal(store.allFailedIn('20261120-090000-aaaa'), true);
  assert.equal(store.allFailedIn('20261121-090000-bbbb'), false);
  // Its scores have the last word.
  store.setScores('20261121-090000-bbbb', { rankings: [{ ...ranking(1, 'crasher'), eligible: false, ineligible: 'failed' }], winner: null, allFailed: true });
  assert.equal(store.allFailedIn('20261121-090000-bbbb'), true);
  assert.equal(store.winnerOf('20261121-090000-bbbb'), null);
  store.raceStarted('again', { raceId: '20261122-090000-cccc', agents: [] });
  store.raceFinished({ raceId: '20261122-090000-cccc', status: 'completed', rankings: [], winner: null, autoMergeEligible: false, allFailed: true });
  assert.equal(store.allFailedIn('20261122-090000-cccc'), true);
});

test("an agent's warnings, denied tool calls and stderr tail are kept from hydra/agentFinished", () => {
  const store = started({ t: 0 });
  const raceId = '20261121-101500-a3f9';
  store.agentFinished({
    raceId, agentId: 'fixer', status: 'completed', exitCode: 0, durationMs: 10,
    warnings: ['permission denied: Write /etc/passwd'], deniedToolCalls: 1, stderrTail: 'denied\n',
  });
  const fixer = store.get(raceId)?.agents[0];
  assert.deepEqual(fixer?.warnings, ['permission denied: Write /etc/passwd']);
  assert.equal(fixer?.deniedToolCalls, 1);
  assert.equal(fixer?.stderrTail, 'denied\n');
  store.agentFinished({ raceId, agentId: 'breaker', status: 'failed', exitCode: 1, durationMs: 10 });
  const breaker = store.get(raceId)?.agents[1];
  assert.equal(breaker?.warnings, undefined);
  assert.equal(breaker?.deniedToolCalls, undefined);
});

test('a merge made here marks the race merged at once; a dry run or a conflict does not', () => {
  const store = started({ t: Date.parse('2026-11-21T10:20:00.000Z') });
  const raceId = '20261121-101500-a3f9';
  let changes = 0;
  store.onDidChange(() => changes++);
  const result = {
    outcome: 'fastForward' as const, agentId: 'fixer', branch: 'hydra/fixer-x', targetBranch: 'main', dryRun: true,
    files: ['lib.sh'], conflicts: [], commit: '4b1d9c0e7a2f', cleanedUp: false,
  };
  store.merged(raceId, result);
  store.merged(raceId, { ...result, dryRun: false, outcome: 'conflict', conflicts: ['lib.sh'] });
  assert.equal(store.mergedOf(raceId), undefined);
  assert.equal(changes, 0);
  store.merged(raceId, { ...result, dryRun: false, cleanedUp: true });
  assert.deepEqual(store.mergedOf(raceId), {
    agentId: 'fixer', outcome: 'fastForward', targetBranch: 'main', commit: '4b1d9c0e7a2f', mergedAt: '2026-11-21T10:20:00.000Z',
  });
  assert.equal(changes, 1);
});

test("hydra's merged record comes with the summaries; what auto_merge merged is merged when the race ends", () => {
  const store = new RaceStore(() => 0);
  const merged = { agentId: 'fixer', outcome: 'merged' as const, targetBranch: 'main', mergedAt: '2026-11-21T10:20:00.000Z' };
  store.setSummaries([{ raceId: '20261120-090000-aaaa', task: 't', state: 'completed', createdAt: '', baseCommit: 'c', agents: [], merged }]);
  assert.deepEqual(store.mergedOf('20261120-090000-aaaa'), merged);
  store.raceStarted('again', { raceId: '20261122-090000-cccc', agents: [] });
  const finished = { raceId: '20261122-090000-cccc', status: 'completed' as const, rankings: [], winner: 'fixer', autoMergeEligible: true, allFailed: false };
  store.raceFinished({ ...finished, autoMerge: { agentId: 'fixer', outcome: 'conflict', conflicts: ['lib.sh'] } });
  assert.equal(store.mergedOf('20261122-090000-cccc'), undefined, 'a conflict merged nothing');
  store.raceFinished({ ...finished, autoMerge: { agentId: 'fixer', outcome: 'fastForward', targetBranch: 'main', commit: 'abc' } });
  assert.deepEqual(store.mergedOf('20261122-090000-cccc'),
    { agentId: 'fixer', outcome: 'fastForward', targetBranch: 'main', commit: 'abc', mergedAt: new Date(0).toISOString(), automatic: true });
});
