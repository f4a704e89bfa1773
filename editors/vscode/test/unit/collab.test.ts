import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { RaceStore } from '../../src/raceStore';
import {
  breakdownText, collabDescription, collabTooltip, isCollab, iterationAgentId, iterationAgents, iterationDescription, iterationOf,
  iterationPickDescription, iterationRows, iterationTooltip, phaseFromSummary, phaseText, reviewFirstLine, stopReasonText,
} from '../../src/collabModel';
import type { CollabResult, IterationFinishedParams, RaceSummary, Ranking } from '../../src/protocol';

const raceId = '20261126-101500-c0ab';
const fixturePath = path.join(__dirname, '../../../test/unit/fixtures/collab.json');
const collaboration = { builder: 'mason', reviewer: 'critic', maxIterations: 3, untilScore: 100, approveMarker: 'LGTM' };

function ranking(agentId: string, total: number): Ranking {
  return {
    rank: 1, agentId, agent: 'mason', status: 'completed', total,
    breakdown: { build: 100, tests: total < 90 ? 25 : 100, lint: null, diffSize: 97.5, speed: 100 },
    checks: { build: null, tests: null, lint: null }, diff: { linesAdded: 3, linesRemoved: 1, filesChanged: 2 }, eligible: true,
  };
}

/** hydra/collab's answer, as the contract has it: a RaceSummary of kind "collab". */
function started(clock = { t: 1000 }): RaceStore {
  const store = new RaceStore(() => clock.t);
  const result: CollabResult = {
    raceId,
    kind: 'collab',
    agents: [
      { agentId: 'builder', agent: 'mason', branch: `hydra/builder-${raceId}`, worktree: '/w/builder' },
      { agentId: 'reviewer', agent: 'critic', branch: `hydra/reviewer-${raceId}`, worktree: '/w/reviewer' },
    ],
    collaboration,
    iterations: [],
  };
  store.collabStarted('Handle the empty cart', result);
  return store;
}

const agent = (agentId: string, phase: 'build' | 'review' | 'refine', iteration: number) =>
  ({ raceId, agentId, agent: agentId === 'builder' ? 'mason' : 'critic', branch: 'b', worktree: 'w', phase, iteration });

function iterationFinished(iteration: number, more: Partial<IterationFinishedParams>): IterationFinishedParams {
  return { raceId, iteration, builderStatus: 'completed', resumed: false, approved: false, next: 'refine', ...more };
}

test('iteration ids: builder@N is iteration N, nothing else is one', () => {
  assert.equal(iterationAgentId(2), 'builder@2');
  assert.equal(iterationOf('builder@12'), 12);
  for (const id of ['builder', 'reviewer', 'builder@0', 'builder@x', 'fixer', undefined]) assert.equal(iterationOf(id), undefined, String(id));
});

test('phases and stop reasons read as hydra says them', () => {
  assert.equal(phaseText({ phase: 'build', iteration: 1 }), 'iteration 1: building');
  assert.equal(phaseText({ phase: 'scoring', iteration: 1 }), 'iteration 1: scoring');
  assert.equal(phaseText({ phase: 'review', iteration: 1 }), 'iteration 1: reviewing');
  assert.equal(phaseText({ phase: 'refine', iteration: 2 }), 'iteration 2: refining');
  assert.equal(stopReasonText('approved'), 'approved by the reviewer');
  assert.equal(stopReasonText('untilScore', collaboration), 'an unflagged iteration reached the score asked for (100)');
  assert.equal(stopReasonText('maxIterations', collaboration), '3 iterations done');
  assert.equal(stopReasonText('unchanged'), 'the builder changed nothing');
  assert.equal(stopReasonText('builderFailed'), 'the builder failed');
  assert.equal(stopReasonText('reviewerFailed'), 'the reviewer failed');
  assert.equal(stopReasonText('interrupted'), 'hydra stopped before it ended');
  assert.equal(stopReasonText('somethingNew'), 'for a reason this extension does not know (somethingNew)',
    'a reason this client does not know is said in words, never as a bare identifier');
});

test("a review's first line is its first words, without Markdown's marks", () => {
  assert.equal(reviewFirstLine('Please handle the empty cart.\n\n- `cart_total` fails'), 'Please handle the empty cart.');
  assert.equal(reviewFirstLine('\n\n## Review\n\nMore'), 'Review');
  assert.equal(reviewFirstLine('---\n* **Must**: handle `[]`'), 'Must: handle []');
  assert.equal(reviewFirstLine('> LGTM'), 'LGTM');
  assert.equal(reviewFirstLine('1. first point'), 'first point');
  assert.equal(reviewFirstLine('x'.repeat(100), 20), `${'x'.repeat(19)}…`);
  assert.equal(reviewFirstLine('  \n\n'), undefined);
  assert.equal(reviewFirstLine(undefined), undefined);
});

test("a score's breakdown names every dimension, n/a for one not configured", () => {
  assert.equal(breakdownText({ build: 100, tests: 25, lint: null, diffSize: 97.5, speed: 100 }),
    'build 100 · tests 25 · lint n/a · diff size 97.5 · speed 100');
  assert.equal(breakdownText(undefined), undefined);
});

test('a collaboration is told from a race by its kind or its settings', () => {
  const store = started();
  assert.equal(isCollab(store.get(raceId)), true);
  assert.equal(isCollab({ kind: 'race' }), false);
  assert.equal(isCollab({}), false, 'a summary from a hydra without kinds is a race');
  assert.equal(isCollab({ collaboration }), true);
});

test('a collaboration started here: running, its two agents queued, no iteration yet', () => {
  const store = started();
  const race = store.get(raceId);
  assert.equal(race?.state, 'running');
  assert.equal(race?.kind, 'collab');
  assert.deepEqual(race?.agents.map((a) => `${a.agentId}:${a.state}`), ['builder:queued', 'reviewer:queued']);
  assert.deepEqual(race?.iterations, []);
  assert.equal(store.phaseOf(raceId), undefined);
  assert.deepEqual(iterationRows(race!, undefined), []);
  assert.equal(store.running().length, 1);
});

test("a collaboration's notifications move it through its phases and record each iteration", () => {
  const clock = { t: 1000 };
  const store = started(clock);
  let changes = 0;
  store.onDidChange(() => changes++);
  const phase = () => { const p = store.phaseOf(raceId); return p && phaseText(p); };
  const rows = () => iterationRows(store.get(raceId)!, store.phaseOf(raceId));

  store.agentStarted(agent('builder', 'build', 1));
  assert.equal(phase(), 'iteration 1: building');
  assert.deepEqual(rows().map((r) => `${r.agentId}:${r.phase}:${r.summary ? 'recorded' : 'pending'}`), ['builder@1:build:pending']);
  clock.t = 4000;
  assert.equal(store.elapsedMs(raceId, 'builder'), 3000);
  store.agentFinished({ raceId, agentId: 'builder', status: 'completed', exitCode: 0, durationMs: 2900, phase: 'build', iteration: 1 });

  // Scoring an iteration is a phase of the collaboration, which runs on: it is not "scoring" as a race would be.
  store.scoringStarted(raceId, 1);
  assert.equal(store.get(raceId)?.state, 'running');
  assert.equal(phase(), 'iteration 1: scoring');
  store.agentStarted(agent('reviewer', 'review', 1));
  assert.equal(phase(), 'iteration 1: reviewing');
  store.agentFinished({ raceId, agentId: 'reviewer', status: 'completed', exitCode: 0, durationMs: 900, phase: 'review', iteration: 1 });
  store.iterationFinished(iterationFinished(1, {
    commit: 'aaaa1111bbbb2222', score: ranking('builder@1', 62.5), review: 'Please handle the empty cart.\n\n- `cart_total` of nothing fails',
    reviewStatus: 'completed',
  }));
  assert.equal(phase(), 'iteration 2: refining', 'another iteration follows');
  assert.equal(store.rankingOf(raceId, 'builder@1')?.total, 62.5, "the iteration's score is its ranking at once");
  const first = store.get(raceId)?.iterations?.[0];
  assert.deepEqual(first, {
    iteration: 1, builderStatus: 'completed', resumed: false, approved: false, commit: 'aaaa1111bbbb2222', score: 62.5,
    breakdown: { build: 100, tests: 25, lint: null, diffSize: 97.5, speed: 100 },
    review: 'Please handle the empty cart.\n\n- `cart_total` of nothing fails', reviewStatus: 'completed',
  });
  assert.deepEqual(rows().map((r) => `${r.agentId}:${r.phase ?? '-'}`), ['builder@1:-', 'builder@2:refine']);

  // The builder's second run: its time starts again.
  clock.t = 10_000;
  store.agentStarted({ ...agent('builder', 'refine', 2), resumed: true });
  clock.t = 11_000;
  assert.equal(store.elapsedMs(raceId, 'builder'), 1000);
  store.agentFinished({ raceId, agentId: 'builder', status: 'completed', exitCode: 0, durationMs: 1000, phase: 'refine', iteration: 2 });
  store.scoringStarted(raceId, 2);
  store.agentStarted(agent('reviewer', 'review', 2));
  store.agentFinished({ raceId, agentId: 'reviewer', status: 'completed', exitCode: 0, durationMs: 500, phase: 'review', iteration: 2 });
  store.iterationFinished(iterationFinished(2, {
    commit: 'cccc3333', resumed: true, score: ranking('builder@2', 98.4), review: 'LGTM', reviewStatus: 'completed', approved: true,
    next: 'stop', stopReason: 'approved',
  }));
  assert.equal(store.phaseOf(raceId), undefined, 'nothing follows');
  assert.equal(store.get(raceId)?.collaboration?.stopReason, 'approved');
  store.raceFinished({
    raceId, status: 'completed', rankings: [{ ...ranking('builder@2', 98.4), rank: 1 }, { ...ranking('builder@1', 62.5), rank: 2 }],
    winner: 'builder@2', autoMergeEligible: true, allFailed: false, stopReason: 'approved',
  });
  const race = store.get(raceId)!;
  assert.equal(race.state, 'completed');
  assert.equal(store.running().length, 0);
  assert.equal(store.recordedWinnerOf(raceId), 'builder@2');
  assert.equal(store.rankingOf(raceId, 'builder@1')?.rank, 2);
  assert.deepEqual(iterationRows(race, store.phaseOf(raceId)).map((r) => r.agentId), ['builder@1', 'builder@2']);
  assert.equal(collabDescription(race, undefined, 'builder@2'), 'collab · completed · approved by the reviewer · best builder@2 (98.4)');
  assert.equal(changes, 13, 'each of the 13 notifications redraws once');
});

test('a collaboration stopped before its last iteration was reviewed keeps the reason from hydra/raceFinished', () => {
  const store = started();
  store.iterationFinished(iterationFinished(1, { score: ranking('builder@1', 70), review: 'More tests', next: 'refine' }));
  store.iterationFinished(iterationFinished(2, { builderStatus: 'completed', score: ranking('builder@2', 72), next: 'stop' }));
  store.raceFinished({ raceId, status: 'completed', rankings: [], winner: 'builder@2', autoMergeEligible: false, allFailed: false,
    stopReason: 'maxIterations' });
  assert.equal(store.get(raceId)?.collaboration?.stopReason, 'maxIterations');
  // An iteration finished twice (a client that reconnects) is recorded once.
  store.iterationFinished(iterationFinished(2, { score: ranking('builder@2', 72), next: 'stop' }));
  assert.deepEqual(store.get(raceId)?.iterations?.map((i) => i.iteration), [1, 2]);
});

test('notifications of a race keep moving it as before: its scoring is the race being scored', () => {
  const store = new RaceStore(() => 0);
  store.raceStarted('fix add()', { raceId: 'r1', agents: [{ agentId: 'fixer', agent: 'fixer', branch: 'b', worktree: 'w' }] });
  store.agentStarted({ raceId: 'r1', agentId: 'fixer', agent: 'fixer', branch: 'b', worktree: 'w' });
  store.scoringStarted('r1');
  assert.equal(store.get('r1')?.state, 'scoring');
  assert.equal(store.phaseOf('r1'), undefined);
  // An iteration notification for a race nobody knows changes nothing.
  let changes = 0;
  store.onDidChange(() => changes++);
  store.iterationFinished({ ...iterationFinished(1, {}), raceId: 'nope' });
  assert.equal(changes, 0);
});

/** A collaboration as hydra/status or hydra/races give it. */
function summary(more: Partial<RaceSummary> = {}): RaceSummary {
  return {
    raceId, kind: 'collab', task: 'Handle the empty cart\nand say so', state: 'completed', createdAt: '', baseCommit: 'c',
    agents: [
      { agentId: 'builder', agent: 'mason', state: 'completed', elapsedMs: 1000, branch: 'hydra/builder-x', worktree: '/w/builder' },
      { agentId: 'reviewer', agent: 'critic', state: 'completed', elapsedMs: 500, branch: 'hydra/reviewer-x', worktree: '/w/reviewer' },
    ],
    collaboration: { ...collaboration, stopReason: 'approved' },
    iterations: [
      { iteration: 1, commit: 'aaaa', builderStatus: 'completed', resumed: false, score: 62.5,
        breakdown: { build: 100, tests: 25, lint: null, diffSize: 100, speed: 100 }, review: 'Please handle the empty cart.', reviewStatus: 'completed',
        approved: false },
      { iteration: 2, commit: 'bbbb', builderStatus: 'completed', resumed: true, score: 98.4,
        breakdown: { build: 100, tests: 100, lint: null, diffSize: 96, speed: 100 }, review: 'LGTM', reviewStatus: 'completed', approved: true },
    ],
    winner: 'builder@2',
    ...more,
  };
}

test('a collaboration loaded from hydra/races shows its iterations, its best and why it stopped', () => {
  const store = new RaceStore(() => 0);
  store.setSummaries([summary()]);
  const race = store.get(raceId)!;
  assert.equal(store.recordedWinnerOf(raceId), 'builder@2', "the summary's winner, before any scores");
  const rows = iterationRows(race, store.phaseOf(raceId));
  assert.deepEqual(rows.map((r) => r.agentId), ['builder@1', 'builder@2']);
  const ctx = (last: boolean) => ({ collaboration: race.collaboration, winner: 'builder@2', merged: undefined, ranking: undefined, last });
  assert.equal(iterationDescription(rows[0], ctx(false)), '62.5 · review: Please handle the empty cart.');
  assert.equal(iterationDescription(rows[1], ctx(true)), '98.4 · winner · approved · stopped: approved by the reviewer');
  const tip = iterationTooltip(rows[0], ctx(false));
  assert.match(tip, /^builder@1: iteration 1 of at most 3$/m);
  assert.match(tip, /^score 62\.5 \/ 100: build 100 · tests 25 · lint n\/a · diff size 100 · speed 100$/m);
  assert.match(tip, /^review \(critic\):\nPlease handle the empty cart\.$/m);
  assert.match(iterationTooltip(rows[1], ctx(true)), /builder \(mason\): completed, resumed its session/);
  assert.equal(collabDescription(race, undefined, 'builder@2'), 'collab · completed · approved by the reviewer · best builder@2 (98.4)');
  assert.equal(collabTooltip(race), 'Handle the empty cart\nand say so\nbuilder: mason · reviewer: critic\n'
    + 'at most 3 iteration(s), until a score of 100; "LGTM" in a review approves\nstopped: approved by the reviewer');
  // Merged: the iteration merged says so.
  const merged = { agentId: 'builder@2', outcome: 'fastForward' as const, targetBranch: 'main', mergedAt: '' };
  assert.equal(iterationDescription(rows[1], { ...ctx(true), merged }), '98.4 · winner · merged into main · approved · stopped: approved by the reviewer');
});

test("a running collaboration this window did not start: its phase is read from its agents' states", () => {
  const running = (builder: 'running' | 'completed', reviewer: 'running' | 'completed' | 'queued', iterations = summary().iterations!.slice(0, 1)) =>
    summary({
      state: 'running', winner: undefined, collaboration: collaboration, iterations,
      agents: summary().agents.map((a) => ({ ...a, state: a.agentId === 'builder' ? builder : reviewer })),
    });
  assert.deepEqual(phaseFromSummary(running('running', 'queued', [])), { phase: 'build', iteration: 1 });
  assert.deepEqual(phaseFromSummary(running('completed', 'running')), { phase: 'review', iteration: 1 });
  assert.deepEqual(phaseFromSummary(running('running', 'completed')), { phase: 'refine', iteration: 2 });
  assert.equal(phaseFromSummary(running('completed', 'completed')), undefined, 'between runs: nothing to say');
  assert.equal(phaseFromSummary(summary()), undefined, 'a finished one does nothing');
  const store = new RaceStore(() => 0);
  store.setSummaries([running('completed', 'running')]);
  const race = store.get(raceId)!;
  assert.equal(collabDescription(race, store.phaseOf(raceId), undefined), 'collab · iteration 1: reviewing');
  // The iteration being reviewed is recorded already (scored); its row says it is being reviewed.
  const rows = iterationRows(race, store.phaseOf(raceId));
  assert.deepEqual(rows.map((r) => `${r.agentId}:${r.phase}:${r.summary ? 'recorded' : 'pending'}`), ['builder@1:review:recorded']);
  assert.equal(iterationDescription(rows[0], { collaboration, last: true }), 'reviewing… · 62.5 · review: Please handle the empty cart.');
});

test('a cancelled collaboration says so once, and keeps the iterations done', () => {
  // hydra gives "cancelled" as the stop reason of a cancelled collaboration, besides its state.
  const race = summary({ state: 'cancelled', iterations: summary().iterations!.slice(0, 1), winner: 'builder@1',
    collaboration: { ...collaboration, stopReason: 'cancelled' } });
  assert.equal(collabDescription(race, undefined, 'builder@1'), 'collab · cancelled · best builder@1 (62.5)');
  const [row] = iterationRows(race, undefined);
  assert.equal(iterationDescription(row, { collaboration: race.collaboration, winner: 'builder@1', last: true }),
    '62.5 · winner · review: Please handle the empty cart. · cancelled');
});

test("an iteration that failed or could not be scored says so; one that was not reviewed says that", () => {
  const race = summary({
    iterations: [{ iteration: 1, builderStatus: 'failed', resumed: false, approved: false }],
    collaboration: { ...collaboration, stopReason: 'builderFailed' }, winner: null,
  });
  const [row] = iterationRows(race, undefined);
  assert.equal(iterationDescription(row, { collaboration: race.collaboration, last: true }),
    'builder failed · not scored · stopped: the builder failed');
  assert.match(iterationTooltip(row, { collaboration: race.collaboration, last: true }), /^not reviewed$/m);
  assert.deepEqual(iterationAgents(race), [], 'a failed iteration has no result to diff or merge');
});

test("a collaboration's results, for diff, compare and merge, are its iterations with the builder's branch", () => {
  const race = summary();
  assert.deepEqual(iterationAgents(race).map((a) => `${a.agentId}:${a.agent}:${a.state}:${a.branch}:${a.commit}`),
    ['builder@1:mason:completed:hydra/builder-x:aaaa', 'builder@2:mason:completed:hydra/builder-x:bbbb']);
  assert.equal(iterationPickDescription(race, 'builder@1'), 'iteration 1 · 62.5 · review: Please handle the empty cart.');
  assert.equal(iterationPickDescription(race, 'builder@2'), 'iteration 2 · 98.4 · winner · approved');
  assert.equal(iterationPickDescription(race, 'builder@9'), undefined);
});

/**
 * A real collaboration, recorded from hydra (test/e2e/record-collab-fixture.mjs):
 * its notifications, replayed through the store, give what hydra/status
 * records of it afterwards.
 */
test('a recorded collaboration replayed through the store ends as hydra records it', { skip: !fs.existsSync(fixturePath) }, () => {
  const recorded = JSON.parse(fs.readFileSync(fixturePath, 'utf8')) as {
    started: CollabResult; notifications: Array<{ method: string; params: any }>; summary: RaceSummary;
  };
  const store = new RaceStore(() => 0);
  store.collabStarted('Handle the empty cart', recorded.started);
  const phases: string[] = [];
  for (const { method, params } of recorded.notifications) {
    if (method === 'hydra/agentStarted') store.agentStarted(params);
    else if (method === 'hydra/agentFinished') store.agentFinished(params);
    else if (method === 'hydra/scoringStarted') store.scoringStarted(params.raceId, params.iteration);
    else if (method === 'hydra/iterationFinished') store.iterationFinished(params);
    else if (method === 'hydra/raceFinished') store.raceFinished(params);
    const p = store.phaseOf(recorded.started.raceId);
    if (p && phases.at(-1) !== phaseText(p)) phases.push(phaseText(p));
  }
  assert.deepEqual(phases, ['iteration 1: building', 'iteration 1: scoring', 'iteration 1: reviewing', 'iteration 2: refining',
    'iteration 2: scoring', 'iteration 2: reviewing']);
  const live = store.get(recorded.started.raceId)!;
  const want = recorded.summary;
  assert.equal(live.state, want.state);
  assert.equal(store.recordedWinnerOf(live.raceId), want.winner);
  assert.equal(live.collaboration?.stopReason, want.collaboration?.stopReason);
  const facts = (r: RaceSummary) => (r.iterations ?? []).map((i) => ({ iteration: i.iteration, commit: i.commit, score: i.score,
    breakdown: i.breakdown, review: i.review, approved: i.approved, builderStatus: i.builderStatus }));
  assert.deepEqual(facts(live), facts(want));
  // After a reload, the same rows.
  const reloaded = new RaceStore(() => 0);
  reloaded.setSummaries([want]);
  const ctx = (s: RaceStore, last: boolean) => ({
    collaboration: s.get(want.raceId)!.collaboration, winner: s.recordedWinnerOf(want.raceId), last,
  });
  const describe = (s: RaceStore) => iterationRows(s.get(want.raceId)!, s.phaseOf(want.raceId))
    .map((row, i, all) => `${row.agentId}: ${iterationDescription(row, ctx(s, i === all.length - 1))}`);
  assert.deepEqual(describe(store), describe(reloaded));
  assert.match(describe(reloaded).join('\n'), /^builder@1: [\d.]+ · review: Please handle the empty cart\.\nbuilder@2: [\d.]+ · winner · approved · stopped: approved by the reviewer$/);
});
