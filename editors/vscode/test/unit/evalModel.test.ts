import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  type Clock, Throttle, evalEnded, evalRefusal, evalRunRequest, evalSetProblem, evalStarted, interrupted, isEvalSetFile, progressText,
  sampleFinished, statusText,
} from '../../src/evalModel';
import type { EvalRunResult, EvalSample, EvalSampleParams } from '../../src/protocol';

// protocol.ts's ErrorCodes (importing it would bring vscode-languageclient, which needs VS Code).
const ErrorCodes = { UnknownAgentName: -32012, AgentUnavailable: -32022, EvalSetError: -32023 };

const started: EvalRunResult = {
  evalId: 'shopcart-20261126T051500', name: 'shopcart', report: '/r/.hydra/evals/shopcart-20261126T051500.json',
  cases: 1, agents: ['careful', 'alternating'], samples: 2, passK: [1, 2], total: 4, done: 0,
};
const sample: EvalSample = {
  caseId: 'coupon-case', agent: 'careful', index: 0, solved: true, score: 97.5, forgetestScore: 1, builds: true,
  testsPassed: 5, testsFailed: 0, lintWarnings: 0, latencyMs: 1200, status: 'completed',
};
const finishedSample = (done: number, solved: number, evalId = started.evalId): EvalSampleParams =>
  ({ evalId, done, total: 4, solved, sample: { ...sample, solved: done <= solved } });

test('the counts follow hydra/evalRun, each hydra/evalSample and hydra/evalFinished', () => {
  let p = evalStarted(started);
  assert.deepEqual(p, { evalId: started.evalId, name: 'shopcart', report: started.report, total: 4, done: 0, solved: 0, status: 'running' });
  assert.equal(progressText(p), '0/4 samples · 0 solved');
  p = sampleFinished(p, finishedSample(1, 1));
  p = sampleFinished(p, finishedSample(2, 2));
  p = sampleFinished(p, finishedSample(3, 2));
  assert.equal(progressText(p), '3/4 samples · 2 solved');
  assert.equal(statusText(p), 'running · 3/4 samples · 2 solved');
  p = evalEnded(p, { evalId: started.evalId, status: 'completed', report: started.report, done: 4, total: 4, solved: 3 });
  assert.equal(statusText(p), 'completed · 4/4 samples · 3 solved');
});

test('a resumed evaluation starts from the samples its report has', () => {
  const p = evalStarted({ ...started, done: 2 });
  assert.equal(progressText(p), '2/4 samples · 0 solved');
  assert.equal(progressText(sampleFinished(p, finishedSample(3, 2))), '3/4 samples · 2 solved');
});

test('a sample of another evaluation, an older one, or one after the end changes nothing', () => {
  const p = sampleFinished(evalStarted(started), finishedSample(2, 1));
  assert.equal(sampleFinished(p, finishedSample(3, 3, 'other-eval')), p);
  assert.equal(sampleFinished(p, finishedSample(1, 1)), p, 'counts only grow');
  const cancelled = evalEnded(p, { evalId: started.evalId, status: 'cancelled', report: started.report, done: 2, total: 4, solved: 1 });
  assert.equal(cancelled.status, 'cancelled');
  assert.equal(sampleFinished(cancelled, finishedSample(3, 2)), cancelled);
  assert.equal(evalEnded(p, { evalId: 'other-eval', status: 'completed', report: '/x', done: 4, total: 4, solved: 4 }), p);
});

test('an evaluation hydra stopped under is interrupted; one that ended stays as it ended', () => {
  const p = sampleFinished(evalStarted(started), finishedSample(1, 1));
  assert.equal(interrupted(p).status, 'interrupted');
  assert.equal(progressText(interrupted(p)), '1/4 samples · 1 solved');
  const done = evalEnded(p, { evalId: started.evalId, status: 'completed', report: started.report, done: 4, total: 4, solved: 3 });
  assert.equal(interrupted(done), done);
});

/** A clock the test moves by hand. */
class FakeClock implements Clock {
  t = 0;
  private timers: Array<{ at: number; fn: () => void; id: number }> = [];
  private next = 1;
  now() { return this.t; }
  setTimeout(fn: () => void, ms: number) {
    const id = this.next++;
    this.timers.push({ at: this.t + ms, fn, id });
    return id;
  }
  clearTimeout(handle: unknown) { this.timers = this.timers.filter((t) => t.id !== handle); }
  get pending() { return this.timers.length; }
  /** Moves time on, firing what falls due. */
  async advance(ms: number) {
    this.t += ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= this.t).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      due.fn();
      await settle();
    }
    await settle();
  }
}
const settle = () => new Promise((r) => setImmediate(r));

test('refreshes run at once, then at most once per interval, however many samples come', async () => {
  const clock = new FakeClock();
  const runs: number[] = [];
  const throttle = new Throttle(async () => { runs.push(clock.t); }, 1000, clock);
  throttle.schedule();
  await settle();
  assert.deepEqual(runs, [0], 'the first at once');
  clock.t = 100;
  throttle.schedule();
  clock.t = 300;
  throttle.schedule();
  throttle.schedule();
  await settle();
  assert.deepEqual(runs, [0], 'the next wait for the interval');
  assert.equal(clock.pending, 1, 'as one');
  await clock.advance(700);
  assert.deepEqual(runs, [0, 1000], 'at its end, once');
  await clock.advance(2500);
  throttle.schedule();
  await settle();
  assert.deepEqual(runs, [0, 1000, 3500], 'after a quiet interval, at once again');
});

test('a refresh never runs while another does; flush draws last what is true when it is called', async () => {
  const clock = new FakeClock();
  let release: () => void = () => undefined;
  let active = 0;
  let most = 0;
  const log: string[] = [];
  const throttle = new Throttle(() => {
    active++;
    most = Math.max(most, active);
    log.push(`start@${clock.t}`);
    return new Promise<void>((resolve) => { release = () => { active--; log.push(`end@${clock.t}`); resolve(); }; });
  }, 1000, clock);
  throttle.schedule();
  await settle();
  await clock.advance(5000);
  throttle.schedule(); // while the first still runs: waits for it
  await settle();
  assert.deepEqual(log, ['start@0']);
  const flushed = throttle.flush();
  release();
  await settle();
  assert.deepEqual(log, ['start@0', 'end@5000', 'start@5000'], 'flush: one more, after the one running');
  release();
  await flushed;
  assert.equal(most, 1);
  assert.equal(clock.pending, 0, 'the refresh that waited was dropped: flush covered it');
  throttle.dispose();
  throttle.schedule();
  await clock.advance(5000);
  assert.equal(log.length, 4, 'nothing after dispose');
});

test('a refresh that fails does not stop the next', async () => {
  const clock = new FakeClock();
  let calls = 0;
  const throttle = new Throttle(async () => {
    calls++;
    if (calls === 1) throw new Error('no report yet');
  }, 1000, clock);
  throttle.schedule();
  await settle();
  await clock.advance(1000);
  throttle.schedule();
  await settle();
  assert.equal(calls, 2);
});

const evalSetError = {
  code: ErrorCodes.EvalSetError,
  message: '/w/evals/broken.toml:3:9: expected a value',
  data: { file: '/w/evals/broken.toml', line: 3, column: 9, message: 'expected a value' },
};

test('a broken eval set is said at its file, line and column, with the place to open', () => {
  const problem = evalSetProblem(evalSetError, ErrorCodes.EvalSetError);
  assert.deepEqual(problem, { file: '/w/evals/broken.toml', line: 3, column: 9, message: 'expected a value' });
  assert.equal(evalRefusal(evalSetError, problem), 'Hydra: /w/evals/broken.toml:3:9: expected a value');
  // A message that does not name the place gets it in front.
  const terse = { ...evalSetError, message: 'expected a value' };
  assert.equal(evalRefusal(terse, evalSetProblem(terse, ErrorCodes.EvalSetError)), 'Hydra: /w/evals/broken.toml:3:9: expected a value');
  // A missing set: no line or column to go to.
  const missing = { code: ErrorCodes.EvalSetError, message: '/w/nope.toml: cannot read: No such file or directory',
    data: { file: '/w/nope.toml', line: 0, column: 0, message: 'cannot read: No such file or directory' } };
  assert.deepEqual(evalSetProblem(missing, ErrorCodes.EvalSetError), { file: '/w/nope.toml', line: 0, column: 0, message: 'cannot read: No such file or directory' });
  assert.equal(evalRefusal(missing, evalSetProblem(missing, ErrorCodes.EvalSetError)), 'Hydra: /w/nope.toml: cannot read: No such file or directory');
});

test('other refusals are said in hydra\'s words with what their data adds', () => {
  const unknown = { code: ErrorCodes.UnknownAgentName, message: "unknown agent 'carefull'",
    data: { agent: 'carefull', known: ['careful', 'alternating'], suggestion: 'careful' } };
  assert.equal(evalSetProblem(unknown, ErrorCodes.EvalSetError), undefined);
  assert.equal(evalRefusal(unknown, undefined), "Hydra: unknown agent 'carefull' (did you mean 'careful'?; known agents: careful, alternating)");
  const unavailable = { code: ErrorCodes.AgentUnavailable, message: "agent 'aider' is not available",
    data: { agent: 'aider', problem: "'aider' not found on PATH" } };
  assert.equal(evalRefusal(unavailable, undefined), "Hydra: agent 'aider' is not available ('aider' not found on PATH)");
  assert.equal(evalSetProblem({ ...evalSetError, data: null }, ErrorCodes.EvalSetError), undefined);
  assert.equal(evalSetProblem('boom', ErrorCodes.EvalSetError), undefined);
});

test('Run Eval Set takes {set, agents, samples, passK} from a keybinding or another extension', () => {
  assert.deepEqual(evalRunRequest({ set: '/e/shopcart.toml', agents: ['careful', 'alternating'], samples: 2 }),
    { set: '/e/shopcart.toml', agents: ['careful', 'alternating'], samples: 2 });
  assert.deepEqual(evalRunRequest({ set: 'evals/a.toml', passK: [1, 5] }), { set: 'evals/a.toml', passK: [1, 5] });
  for (const nothing of [undefined, null, 'x.toml', [], {}, { set: '' }, { path: '/e/a.toml' }]) assert.equal(evalRunRequest(nothing), undefined);
  assert.equal(evalRunRequest({ set: 'a.toml', samples: 0 }), 'samples must be a whole number, 1 or more');
  assert.equal(evalRunRequest({ set: 'a.toml', samples: 1.5 }), 'samples must be a whole number, 1 or more');
  assert.equal(evalRunRequest({ set: 'a.toml', agents: 'careful' }), 'agents must be a list of agent names');
  assert.equal(evalRunRequest({ set: 'a.toml', passK: [0] }), 'passK must be a list of whole numbers, each 1 or more');
});

test('an eval set is a .toml file other than hydra.toml', () => {
  assert.ok(isEvalSetFile('/w/examples/eval/shopcart.toml'));
  assert.ok(isEvalSetFile('C:\\w\\evals\\Basics.TOML'));
  assert.ok(!isEvalSetFile('/w/hydra.toml'));
  assert.ok(!isEvalSetFile('/w/report.json'));
  assert.ok(!isEvalSetFile('/w/toml'));
});
