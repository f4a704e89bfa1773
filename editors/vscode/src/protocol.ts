// hydra's wire protocol as typed constants: every hydra/* request and
// notification, mirrored from protocol/methods.h and protocol/hydra.h
// (docs/protocol.md describes them). Nothing else in the extension spells a
// method name.
import { NotificationType, RequestType, RequestType0 } from 'vscode-languageclient/node';

export interface AgentInfo {
  name: string;
  adapter: string;
  binary: string;
  configured: boolean;
  available: boolean;
  version: string | null;
  path?: string;
  problem?: string;
}
export interface AgentsResult {
  agents: AgentInfo[];
  /**
   * hydra.toml's [collaboration] builder and reviewer, when the server names
   * them (the collaboration contract does not say where it does: absent, the
   * user just picks).
   */
  collaboration?: { builder?: string | null; reviewer?: string | null };
  /**
   * The executors worth offering for a run, the default ([executor] kind)
   * first; more than one only when hydra.toml prepares Slurm. Absent from an
   * older hydra: nothing to ask.
   */
  executors?: string[];
}

export interface RaceParams { task: string; agents: string[]; base?: string; executor?: string; workDoneToken?: string | number }
export interface RaceAgent { agentId: string; agent: string; branch: string; worktree: string }
export interface RaceResult {
  raceId: string;
  agents: RaceAgent[];
  /** How its agents run: "bubblewrap" or "unconfined" (docs/security.md). */
  sandbox?: string;
  /** Why they run unconfined when that was not asked for. */
  sandboxWarning?: string;
}

/**
 * `setupFailed`: hydra.toml's setup_command failed in the agent's worktree, so the agent never ran.
 * `notNeeded`: a finished collaboration's reviewer that the loop ended without.
 */
export type AgentStateName =
  'queued' | 'running' | 'completed' | 'failed' | 'timedOut' | 'cancelled' | 'interrupted' | 'setupFailed' | 'notNeeded';
export type RaceStateName = 'running' | 'scoring' | 'completed' | 'cancelled' | 'interrupted' | 'failed';

export interface AgentState {
  agentId: string;
  agent: string;
  state: AgentStateName;
  elapsedMs: number;
  exitCode?: number | null;
  branch: string;
  worktree: string;
  commit?: string;
  error?: string;
  warnings?: string[];
  /** The last lines its CLI wrote to stderr. */
  stderrTail?: string;
  /** Tool calls its CLI refused for want of permission. */
  deniedToolCalls?: number;
  rank?: number;
  total?: number;
}
/** Which agent of a race was merged into the user's branch, and how (by hydra/merge, `hydra merge` or auto_merge). */
export interface MergedRecord {
  agentId: string;
  outcome: 'fastForward' | 'merged' | 'upToDate';
  targetBranch: string;
  commit?: string;
  mergedAt: string;
  /** Merged by [scoring] auto_merge. */
  automatic?: boolean;
}
/**
 * Why a collaboration stopped refining. hydra also gives "cancelled" for one
 * cancelled (not in the collaboration protocol's list of reasons).
 */
export type CollabStopReason = 'untilScore' | 'approved' | 'maxIterations' | 'unchanged' | 'builderFailed' | 'reviewerFailed' | 'cancelled';
/** What a collaboration's agent run does: the builder builds (iteration 1) or refines (2..), the reviewer reviews. */
export type CollabPhase = 'build' | 'review' | 'refine';
/** A collaboration's settings, as it started with them. */
export interface CollaborationInfo {
  /** The agents' configured names (their agent ids are "builder" and "reviewer"). */
  builder: string;
  reviewer: string;
  maxIterations: number;
  untilScore?: number | null;
  approveMarker: string;
  /** Once it stopped refining. */
  stopReason?: CollabStopReason;
}
/** One iteration of a collaboration (agent id "builder@N"), as hydra/status and hydra/races give it. */
export interface IterationSummary {
  /** 1-based. */
  iteration: number;
  commit?: string;
  builderStatus: string;
  /** The builder's CLI continued its previous session. */
  resumed: boolean;
  /** Its total, when it could be scored. */
  score?: number;
  breakdown?: ScoreBreakdown;
  /** The reviewer's final message (Markdown); absent when no review ran for it. */
  review?: string;
  reviewStatus?: string;
  /** The review contained the approve marker. */
  approved: boolean;
}
export interface RaceSummary {
  raceId: string;
  /** "collab" for a collaboration; a race is "race" (or says nothing, from an older hydra). */
  kind?: 'race' | 'collab';
  task: string;
  state: RaceStateName;
  createdAt: string;
  finishedAt?: string;
  baseCommit: string;
  agents: AgentState[];
  winner?: string | null;
  allFailed?: boolean;
  /** How its agents ran: "bubblewrap" or "unconfined" (docs/security.md). */
  sandbox?: string;
  /** Why they ran unconfined when that was not asked for. */
  sandboxWarning?: string;
  /** Present once one of its agents was merged: the race gives no other result. */
  merged?: MergedRecord;
  /** A collaboration's settings and stop reason. */
  collaboration?: CollaborationInfo;
  /** A collaboration's iterations, first first. */
  iterations?: IterationSummary[];
}
export interface StatusParams { raceId?: string }
export interface StatusResult { races: RaceSummary[] }
export interface RacesParams { offset?: number; limit?: number }
export interface RacesResult { races: RaceSummary[]; total: number; nextOffset?: number }

export interface CollabParams {
  task: string;
  /** Agent names; both optional when hydra.toml's [collaboration] names them. */
  builder?: string;
  reviewer?: string;
  maxIterations?: number;
  untilScore?: number;
  base?: string;
  executor?: string;
  workDoneToken?: string | number;
}
/** hydra/collab's answer: the collaboration's summary at its start. */
export interface CollabResult extends RaceResult {
  kind: 'collab';
  collaboration: CollaborationInfo;
  iterations: IterationSummary[];
  task?: string;
  state?: RaceStateName;
  createdAt?: string;
  baseCommit?: string;
}

export interface CancelParams { raceId: string; agentId?: string }
export interface CancelResult { cancelled: boolean }
export interface RaceIdParams { raceId: string }

/** A problem a build or lint output names at a place; `path` is relative to the agent's worktree when the file lies in it. */
export interface Finding {
  path: string;
  /** 1-based. */
  line: number;
  /** 1-based; absent (or 0) when the tool names none. */
  column?: number;
  severity: 'error' | 'warning';
  message: string;
}
export interface CheckResult {
  command: string;
  skipped: boolean;
  exitCode: number | null;
  signal?: number;
  timedOut: boolean;
  error?: string;
  durationMs: number;
  output: string;
  outputTruncated: boolean;
  tests: { passed: number; failed: number; skipped: number } | null;
  lint: { errors: number; warnings: number } | null;
  format: string;
  /** Each test case's outcome by name, when the test runner's report names them (can be large). */
  testCases?: Record<string, 'passed' | 'failed' | 'skipped'>;
  /** ctest only: the ctest tests whose framework's own case lines were read (`ctest -V`); the rest are named whole. */
  testsReadByCase?: string[];
  /** Build and lint: the problems its output names at a file and line. */
  findings?: Finding[];
}
export interface CheckSet { build: CheckResult | null; tests: CheckResult | null; lint: CheckResult | null }
export interface ScoreBreakdown {
  build: number | null;
  tests: number | null;
  lint: number | null;
  diffSize: number | null;
  speed: number | null;
}
/** How an agent's tests compare, by name, with the base commit's. */
export interface TestChanges {
  /** Failed at the base, pass now. */
  fixed: string[];
  /** Passed at the base, fail now. */
  broken: string[];
  /** Ran at the base and did not run for this agent (counted as failed). */
  removed: string[];
  /** Ran to a verdict at the base, skipped or expected to fail now (counted as failed); absent from an older hydra. */
  skipped?: string[];
}
export interface Ranking {
  rank: number;
  agentId: string;
  agent: string;
  status: string;
  total: number;
  breakdown: ScoreBreakdown;
  checks: CheckSet;
  diff: { linesAdded: number; linesRemoved: number; filesChanged: number };
  durationMs?: number;
  /** Whether it can win and be merged; ineligible agents rank after every eligible one. */
  eligible: boolean;
  /** Why it cannot: "failed", "timed out", "cancelled", "changed nothing", "interrupted"... */
  ineligible?: string;
  /** Present when its tests could be compared by name with the base commit's. */
  testChanges?: TestChanges;
  /** Why it must not be merged automatically, though it may win ("2 tool calls denied"...). */
  flags?: string[];
  /** The protected files (hydra.toml's [scoring] protected_paths) it changed. */
  protectedChanges?: string[];
  /** restore: its checks ran with the base versions of those files put back. */
  protectedMode?: 'flag' | 'restore';
  /** Files it added that would have run in place of the test runner (pytest.py): left out of its checks. */
  runnerShadows?: string[];
  /** Where lines it added look like a secret ("leak.txt:1"); its `flags` say so too. */
  addedSecrets?: string[];
  /** It changed build scripts of the build command: its build run again with the base's versions. */
  buildScript?: { changed: string[]; baseBuild: CheckResult; follows: string[] };
  /** Its tests could not be compared by name (the runner named no tests): counts only. */
  testsByCountsOnly?: boolean;
}
export interface ScoresResult {
  raceId: string;
  rankings: Ranking[];
  winner: string | null;
  baseline?: { commit: string; checks: CheckSet; fromCache: boolean };
  autoMergeEligible: boolean;
  /** Whether [scoring] auto_merge was on when the race was scored; absent from a hydra that does not say. */
  autoMergeEnabled?: boolean;
  /** No agent is eligible, or even the best one is below the fail threshold: then `winner` is null. */
  allFailed: boolean;
}

export interface DiffParams { raceId: string; agentId: string; path?: string }
export type FileStatus = 'added' | 'modified' | 'deleted' | 'renamed' | 'typechange';
export interface FileChange { path: string; oldPath?: string; status: FileStatus; additions: number; deletions: number; binary: boolean }
export interface DiffResult { files: FileChange[]; additions: number; deletions: number; patch: string }
export interface FileContentsResult {
  path: string;
  base: string | null;
  agent: string | null;
  binary: boolean;
  encoding: 'utf-8' | 'base64';
}

/** `force`: merge an agent that is not a safe pick (hydra refuses it otherwise, `data.reason` needsForce). */
export interface MergeParams { raceId: string; agentId?: string; dryRun?: boolean; keep?: boolean; force?: boolean }
export interface MergeResult {
  outcome: 'fastForward' | 'merged' | 'upToDate' | 'conflict';
  agentId: string;
  branch: string;
  targetBranch: string;
  dryRun: boolean;
  files: string[];
  conflicts: string[];
  commit?: string;
  cleanedUp: boolean;
  /** What speaks against merging it, as hydra sees it (a dry run says; present when there is any). */
  concerns?: string[];
}

export interface LogParams { raceId: string; agentId: string; offset?: number; limit?: number; stream?: 'stdout' | 'stderr' }
export interface LogResult { data: string; offset: number; totalSize: number; nextOffset: number }

export interface AgentEventsParams { raceId: string; agentId: string; offset?: number; limit?: number }
export interface AgentEventsResult { events: AgentEvent[]; offset: number; total: number; nextOffset?: number }

export interface CleanupParams {
  raceId?: string;
  keepBranches?: boolean;
  /** Also remove the pooled worktrees ([general] pool_size). */
  pool?: boolean;
}
export interface CleanupResult { removed: string[] }

export interface PingParams { data?: unknown; delayMs?: number; workDoneToken?: string | number }
export interface PingResult { data: unknown; version: string }

// Notifications a race sends while it runs.
export interface AgentStartedParams {
  raceId: string;
  agentId: string;
  agent: string;
  branch: string;
  worktree: string;
  /** In a collaboration: what this run does, and the iteration it belongs to. */
  phase?: CollabPhase;
  iteration?: number;
  /** A refine whose CLI continued the builder's previous session. */
  resumed?: boolean;
}
export interface Usage { inputTokens?: number; outputTokens?: number; cachedInputTokens?: number; costUsd?: number }
export interface AgentEvent {
  kind: 'text' | 'toolCall' | 'toolResult' | 'fileChange' | 'usage' | 'error' | 'summary' | 'raw';
  text?: string;
  tool?: string;
  detail?: string;
  path?: string;
  change?: string;
  isError?: boolean;
  usage?: Usage;
  turns?: number;
  warnings?: string[];
  /** Set on the events hydra/agentEvents returns. */
  stream?: 'stdout' | 'stderr';
}
export interface AgentOutputParams {
  raceId: string;
  agentId: string;
  stream: 'stdout' | 'stderr';
  lines: string[];
  events: AgentEvent[];
  droppedLines?: number;
  phase?: CollabPhase;
  iteration?: number;
}
export interface AgentFinishedParams {
  raceId: string;
  agentId: string;
  status: 'completed' | 'failed' | 'timedOut' | 'cancelled' | 'setupFailed';
  exitCode: number | null;
  durationMs: number;
  error?: string;
  warnings?: string[];
  /** The last lines its CLI wrote to stderr. */
  stderrTail?: string;
  /** Tool calls its CLI refused for want of permission: it is not merged automatically. */
  deniedToolCalls?: number;
  /** What it changed outside its worktree (put back where hydra could): it cannot win. */
  escapes?: string[];
  phase?: CollabPhase;
  iteration?: number;
}
/** In a collaboration, `iteration`: the iteration whose commit is being checked. */
export interface ScoringStartedParams { raceId: string; iteration?: number }
/** A collaboration's iteration is done: built, scored and, unless it is the last, reviewed. */
export interface IterationFinishedParams {
  raceId: string;
  iteration: number;
  commit?: string;
  builderStatus: string;
  resumed: boolean;
  /** As hydra/scores' rankings give it (agentId "builder@N"); absent when it could not be scored. */
  score?: Ranking;
  review?: string;
  reviewStatus?: string;
  approved: boolean;
  next: 'refine' | 'stop';
  stopReason?: CollabStopReason;
}
/** What [scoring] auto_merge did when the race finished. */
export interface AutoMergeOutcome {
  agentId: string;
  outcome: 'fastForward' | 'merged' | 'upToDate' | 'conflict' | 'refused';
  /** The branch it went into (absent when refused, or from a hydra that does not say). */
  targetBranch?: string;
  commit?: string;
  conflicts?: string[];
  /** Why it was refused. */
  error?: string;
}
export interface RaceFinishedParams {
  raceId: string;
  status: RaceStateName;
  rankings: Ranking[];
  winner: string | null;
  autoMergeEligible: boolean;
  /** Whether [scoring] auto_merge was on; absent from a hydra that does not say. */
  autoMergeEnabled?: boolean;
  allFailed: boolean;
  /** Present when auto_merge tried to merge the winner. */
  autoMerge?: AutoMergeOutcome;
  /** A collaboration's: why it stopped refining. */
  stopReason?: CollabStopReason;
}

// Evaluation mode (docs/eval.md): an eval set runs every case x agent x
// sample as a one-agent race hydra does not announce; it speaks only through
// hydra/evalSample, hydra/evalFinished and work-done progress.
export interface EvalRunParams {
  /** The eval set's path, absolute or relative to the repository root. */
  set: string;
  /** Default: the set's `[eval] agents`. */
  agents?: string[];
  /** Default: the set's. */
  samples?: number;
  /** Default: the set's. */
  passK?: number[];
  /** Where the report goes; default `<repo>/.hydra/evals/<name>-<time>.json`. */
  out?: string;
  /** A report of the same set: only its missing samples run. */
  resume?: string;
  /** "local" or "slurm"; default: hydra.toml's [executor] kind. */
  executor?: string;
  workDoneToken?: string | number;
}
export interface EvalRunResult {
  evalId: string;
  name: string;
  /** The report's path. */
  report: string;
  cases: number;
  agents: string[];
  samples: number;
  passK: number[];
  /** cases x agents x samples. */
  total: number;
  /** Samples already in the report (when resuming). */
  done: number;
}
export interface EvalSample {
  caseId: string;
  agent: string;
  /** Which run of this agent on this case, from 0. */
  index: number;
  solved: boolean;
  /** hydra's score, 0..100. */
  score: number;
  /** forgetest's formula, 0..1. */
  forgetestScore: number;
  builds: boolean;
  testsPassed: number;
  testsFailed: number;
  lintWarnings: number;
  latencyMs: number;
  /** The agent's status word ("completed", "failed", ...). */
  status: string;
  commit?: string;
  /** Why the run failed, or why it is not solved. */
  error?: string;
  /** The end of what the verification printed (16 KiB at most, secrets masked). */
  verifyOutput?: string;
  costUsd?: number;
  inputTokens?: number;
  outputTokens?: number;
}
/** pass@k by k ("1", "5"): a share 0..1, null where it is undefined (k greater than the samples). */
export type PassAtK = Record<string, number | null>;
export interface EvalCaseAgent {
  agent: string;
  /** Samples. */
  n: number;
  /** Solved samples. */
  c: number;
  passAtK: PassAtK;
  meanScore: number;
  meanForgetestScore: number;
}
export interface EvalCase { caseId: string; agents: EvalCaseAgent[] }
export interface EvalAgent {
  agent: string;
  /** Its CLI's version; may be empty. */
  version: string;
  /** The mean over the cases of each case's pass@k; null when undefined for any of them. */
  passAtK: PassAtK;
  /** Share of samples that built, 0..1. */
  compileRate: number;
  /** Mean of passed / (passed + failed) over the samples that ran tests, 0..1. */
  testPassRate: number;
  meanScore: number;
  meanForgetestScore: number;
  /** Over the samples that reported a cost. */
  totalCostUsd: number;
  meanLatencyMs: number;
  inputTokens: number;
  outputTokens: number;
  /** The Wilson 95% interval of the share of samples solved. */
  passAt1Wilson: { low: number; high: number };
  samples: number;
  solved: number;
}
/** An evaluation's report, schema "hydra.eval/1" (core/eval/report.h). */
export interface EvalReport {
  schema: string;
  name: string;
  hydraVersion: string;
  evalSetHash: string;
  startedAt: string;
  /** Absent while it runs (and from a report whose run was killed before it ended). */
  finishedAt?: string;
  passK: number[];
  agentVersions: Record<string, string>;
  /** Case id -> the commit its samples started from. */
  baseCommits: Record<string, string>;
  samples: EvalSample[];
  cases: EvalCase[];
  agents: EvalAgent[];
}
export interface EvalReportParams {
  /** A report's path, absolute or relative to the repository root. */
  report?: string;
  /** An evaluation of this session, running or finished: its report as written so far. */
  evalId?: string;
  format?: 'json' | 'text' | 'markdown';
}
export interface EvalReportResult {
  path: string;
  report: EvalReport;
  /** The rendered tables, when `format` is text or markdown. */
  text?: string;
}
export interface EvalCancelParams { evalId: string }
/** One sample finished; `done` and `solved` count the samples in the report, resumed ones included. */
export interface EvalSampleParams { evalId: string; done: number; total: number; solved: number; sample: EvalSample }
export type EvalStatus = 'completed' | 'cancelled';
export interface EvalFinishedParams { evalId: string; status: EvalStatus; report: string; done: number; total: number; solved: number }

export const ping = new RequestType<PingParams, PingResult, void>('hydra/ping');
export const agents = new RequestType0<AgentsResult, void>('hydra/agents');
export const race = new RequestType<RaceParams, RaceResult, void>('hydra/race');
export const collab = new RequestType<CollabParams, CollabResult, void>('hydra/collab');
export const status = new RequestType<StatusParams, StatusResult, void>('hydra/status');
export const cancel = new RequestType<CancelParams, CancelResult, void>('hydra/cancel');
export const scores = new RequestType<RaceIdParams, ScoresResult, void>('hydra/scores');
export const diff = new RequestType<DiffParams, DiffResult, void>('hydra/diff');
export const fileContents = new RequestType<DiffParams, FileContentsResult, void>('hydra/diff');
export const merge = new RequestType<MergeParams, MergeResult, void>('hydra/merge');
export const log = new RequestType<LogParams, LogResult, void>('hydra/log');
export const agentEvents = new RequestType<AgentEventsParams, AgentEventsResult, void>('hydra/agentEvents');
export const races = new RequestType<RacesParams, RacesResult, void>('hydra/races');
export const cleanup = new RequestType<CleanupParams, CleanupResult, void>('hydra/cleanup');
export const evalRun = new RequestType<EvalRunParams, EvalRunResult, void>('hydra/evalRun');
export const evalReport = new RequestType<EvalReportParams, EvalReportResult, void>('hydra/evalReport');
export const evalCancel = new RequestType<EvalCancelParams, CancelResult, void>('hydra/evalCancel');

export const agentStarted = new NotificationType<AgentStartedParams>('hydra/agentStarted');
export const agentOutput = new NotificationType<AgentOutputParams>('hydra/agentOutput');
export const agentFinished = new NotificationType<AgentFinishedParams>('hydra/agentFinished');
export const scoringStarted = new NotificationType<ScoringStartedParams>('hydra/scoringStarted');
export const iterationFinished = new NotificationType<IterationFinishedParams>('hydra/iterationFinished');
export const raceFinished = new NotificationType<RaceFinishedParams>('hydra/raceFinished');
export const evalSample = new NotificationType<EvalSampleParams>('hydra/evalSample');
export const evalFinished = new NotificationType<EvalFinishedParams>('hydra/evalFinished');

// hydra.toml's problems come as LSP's textDocument/publishDiagnostics
// (vscode-languageclient's PublishDiagnosticsNotification), not a hydra/* name.

/** MergeRefused's `data.reason`; `alreadyMerged` comes with the `agentId` that was merged. */
export type MergeRefusedReason = 'mergeInProgress' | 'detachedHead' | 'unbornHead' | 'ineligible' | 'alreadyMerged';

// hydra's application error codes (docs/protocol.md, "Error codes").
export const ErrorCodes = {
  UnknownRace: -32010,
  UnknownAgent: -32011,
  UnknownAgentName: -32012,
  PathOutsideChanges: -32013,
  DirtyWorkingTree: -32014,
  MergeRefused: -32015,
  NotScored: -32016,
  NoResult: -32017,
  RaceRunning: -32018,
  ConfigError: -32019,
  NotARepository: -32020,
  RaceRefused: -32021,
  AgentUnavailable: -32022,
  EvalSetError: -32023,
} as const;
