// An evaluation as the report view follows it: its progress from
// hydra/evalRun's answer, each hydra/evalSample and hydra/evalFinished; the
// refresh of its report, at most once per interval however fast samples
// finish; and what the user is told when hydra refuses to run a set. Pure
// (no VS Code), so the unit tests run it under plain Node.
import type { EvalFinishedParams, EvalRunParams, EvalRunResult, EvalSampleParams, EvalStatus } from './protocol';
import { describeServerError } from './format';

export interface EvalProgress {
  evalId: string;
  name: string;
  /** The report's path. */
  report: string;
  total: number;
  done: number;
  solved: number;
  /**
   * Running until hydra/evalFinished says how it ended; interrupted when hydra
   * stopped first (the report keeps the samples that finished).
   */
  status: 'running' | EvalStatus | 'interrupted';
}

/** What Run Eval Set runs: the set, and what to run of it instead of the set's own agents, samples and pass@k. */
export type EvalRunRequest = Pick<EvalRunParams, 'set' | 'agents' | 'samples' | 'passK'>;

/**
 * Run Eval Set's argument when a keybinding or another extension gives one:
 * `{set, agents?, samples?, passK?}`. Undefined when it is not such an object
 * (then the command asks); a field of the wrong type is an error, said in
 * words, rather than silently dropped.
 */
export function evalRunRequest(arg: unknown): EvalRunRequest | string | undefined {
  if (typeof arg !== 'object' || arg === null || Array.isArray(arg)) return undefined;
  const a = arg as Record<string, unknown>;
  if (typeof a.set !== 'string' || a.set.trim() === '') return undefined;
  const request: EvalRunRequest = { set: a.set };
  const counts = (x: unknown) => Array.isArray(x) && x.every((n) => Number.isInteger(n) && n >= 1);
  if (a.agents !== undefined) {
    if (!Array.isArray(a.agents) || !a.agents.every((n) => typeof n === 'string' && n !== '')) return 'agents must be a list of agent names';
    request.agents = a.agents as string[];
  }
  if (a.samples !== undefined) {
    if (!Number.isInteger(a.samples) || (a.samples as number) < 1) return 'samples must be a whole number, 1 or more';
    request.samples = a.samples as number;
  }
  if (a.passK !== undefined) {
    if (!counts(a.passK)) return 'passK must be a list of whole numbers, each 1 or more';
    request.passK = a.passK as number[];
  }
  return request;
}

/** Whether a file can be an eval set: a .toml file other than hydra.toml (hydra's own configuration). */
export function isEvalSetFile(fsPath: string): boolean {
  const name = fsPath.split(/[\\/]/).pop() ?? '';
  return name.toLowerCase().endsWith('.toml') && name !== 'hydra.toml';
}

/** An evaluation hydra has just started (`done`: the samples a resumed report had already; solved ones among them are not known yet). */
export function evalStarted(result: EvalRunResult): EvalProgress {
  return { evalId: result.evalId, name: result.name, report: result.report, total: result.total, done: result.done, solved: 0, status: 'running' };
}

/**
 * After a sample: hydra's counts, which include every sample in the report.
 * A notification older than what is known already (counts only grow) changes
 * nothing, nor does one for another evaluation or one that came after the end.
 */
export function sampleFinished(progress: EvalProgress, p: EvalSampleParams): EvalProgress {
  if (p.evalId !== progress.evalId || progress.status !== 'running' || p.done < progress.done) return progress;
  return { ...progress, done: p.done, total: p.total, solved: p.solved };
}

/** How it ended: completed or cancelled, with the final counts and where the report is. */
export function evalEnded(progress: EvalProgress, p: EvalFinishedParams): EvalProgress {
  if (p.evalId !== progress.evalId) return progress;
  return { ...progress, status: p.status, done: p.done, total: p.total, solved: p.solved, report: p.report || progress.report };
}

/** "3/4 samples · 2 solved". */
export function progressText(p: Pick<EvalProgress, 'done' | 'total' | 'solved'>): string {
  return `${p.done}/${p.total} samples · ${p.solved} solved`;
}

/** Where hydra stopped before the evaluation ended: what the user still has. */
export function interrupted(progress: EvalProgress): EvalProgress {
  return progress.status === 'running' ? { ...progress, status: 'interrupted' } : progress;
}

/** "completed · 4/4 samples · 3 solved", "running · 1/4 samples · 1 solved". */
export function statusText(p: Pick<EvalProgress, 'done' | 'total' | 'solved' | 'status'>): string {
  return `${p.status} · ${progressText(p)}`;
}

/** Where an eval set is broken (EvalSetError's `data`): 1-based line and column, 0 when hydra does not know. */
export interface EvalSetProblem {
  file: string;
  line: number;
  column: number;
  message: string;
}

/** The place EvalSetError (-32023) names; undefined for any other error. */
export function evalSetProblem(error: unknown, code: number): EvalSetProblem | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { code?: unknown; message?: unknown; data?: unknown };
  if (e.code !== code) return undefined;
  const data = e.data as Record<string, unknown> | undefined | null;
  if (!data || typeof data !== 'object' || typeof data.file !== 'string' || data.file === '') return undefined;
  const count = (x: unknown) => (typeof x === 'number' && Number.isInteger(x) && x > 0 ? x : 0);
  return {
    file: data.file,
    line: count(data.line),
    column: count(data.column),
    message: typeof data.message === 'string' ? data.message : typeof e.message === 'string' ? e.message : '',
  };
}

/**
 * What the error notification says when hydra refuses to run a set: for a
 * broken set, "FILE:LINE:COLUMN: problem" (hydra's message reads so already;
 * one that does not gets the place put in front); otherwise hydra's message
 * with what its data adds (the agent it meant, why one cannot run).
 */
export function evalRefusal(error: unknown, problem: EvalSetProblem | undefined): string {
  const said = describeServerError(error);
  if (!problem || problem.line === 0) return `Hydra: ${said}`;
  const place = `${problem.file}:${problem.line}:${problem.column}`;
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && message.includes(place) ? `Hydra: ${message}` : `Hydra: ${place}: ${problem.message || said}`;
}

/** The refresh's timers, given by the caller (the unit tests give a clock of their own). */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Runs `refresh` at most once per `intervalMs`: the first request at once,
 * the ones within the interval after it once, at its end; never two at a
 * time (a request while one runs waits for it). `flush` runs it now, whatever
 * the interval; after `dispose` nothing runs any more.
 */
export class Throttle {
  private last = Number.NEGATIVE_INFINITY;
  private timer: unknown;
  private running: Promise<void> | undefined;
  private again = false;
  private disposed = false;

  constructor(private readonly refresh: () => Promise<void>, private readonly intervalMs: number, private readonly clock: Clock = systemClock) {}

  /** Asks for a refresh. */
  schedule(): void {
    if (this.disposed || this.timer !== undefined) return;
    if (this.running) {
      this.again = true;
      return;
    }
    const wait = this.last + this.intervalMs - this.clock.now();
    if (wait <= 0) {
      void this.run();
      return;
    }
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      void this.run();
    }, wait);
  }

  /**
   * Refreshes now, after the one running if any (whose answer may be older),
   * dropping a refresh that waits: what it draws last is what was true when
   * it was called.
   */
  async flush(): Promise<void> {
    this.cancelTimer();
    this.again = false;
    if (this.running) await this.running;
    this.cancelTimer();
    this.again = false;
    // One that started meanwhile started after the call: as fresh.
    if (this.running) return this.running;
    if (!this.disposed) await this.run();
  }

  dispose(): void {
    this.disposed = true;
    this.again = false;
    this.cancelTimer();
  }

  private cancelTimer(): void {
    if (this.timer === undefined) return;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async run(): Promise<void> {
    this.last = this.clock.now();
    const running = this.refresh().catch(() => undefined);
    this.running = running;
    await running;
    if (this.running === running) this.running = undefined;
    if (this.again) {
      this.again = false;
      this.schedule();
    }
  }
}
