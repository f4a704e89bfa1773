// What the extension knows about races: the summaries hydra/status and
// hydra/races return, kept current by the notifications of the races this
// session runs. The tree view and the status bar read it. No VS Code imports:
// the unit tests drive it with recorded notifications. A collaboration is a
// race of kind "collab": its iterations and the phase it is in are kept too.
import type {
  AgentFinishedParams, AgentStartedParams, AgentState, CollabResult, IterationFinishedParams, MergeResult, MergedRecord,
  RaceFinishedParams, RaceResult, RaceSummary, Ranking, ScoresResult,
} from './protocol';
import { raceIsActive } from './format';
import { type LivePhase, isCollab, iterationAgentId, iterationFromNotification, phaseFromSummary } from './collabModel';

type Listener = () => void;

export class RaceStore {
  private readonly races = new Map<string, RaceSummary>();
  private readonly rankings = new Map<string, Ranking[]>();
  private readonly winners = new Map<string, string | null>();
  // Races scored without a winner: every agent failed.
  private readonly allFailed = new Map<string, boolean>();
  // When each running agent started, on this machine's clock, for a live elapsed time.
  private readonly startedAt = new Map<string, number>();
  // What each collaboration this session watches is doing, from its notifications.
  private readonly phases = new Map<string, LivePhase>();
  private readonly listeners: Listener[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  onDidChange(listener: Listener): { dispose(): void } {
    this.listeners.push(listener);
    return { dispose: () => this.listeners.splice(this.listeners.indexOf(listener), 1) };
  }

  /** Races, newest first (race ids sort by creation time). */
  list(): RaceSummary[] {
    return [...this.races.values()].sort((a, b) => (a.raceId < b.raceId ? 1 : a.raceId > b.raceId ? -1 : 0));
  }

  get(raceId: string): RaceSummary | undefined {
    return this.races.get(raceId);
  }

  running(): RaceSummary[] {
    return this.list().filter((r) => raceIsActive(r.state));
  }

  rankingOf(raceId: string, agentId: string): Ranking | undefined {
    return this.rankings.get(raceId)?.find((r) => r.agentId === agentId);
  }

  /** Elapsed time of an agent: live while it runs, hydra's figure otherwise. */
  elapsedMs(raceId: string, agentId: string): number {
    const agent = this.races.get(raceId)?.agents.find((a) => a.agentId === agentId);
    if (!agent) return 0;
    const started = this.startedAt.get(key(raceId, agentId));
    if (agent.state === 'running' && started !== undefined) return Math.max(agent.elapsedMs, this.now() - started);
    return agent.elapsedMs;
  }

  /** Replaces what is known with hydra's summaries (hydra/status or hydra/races). */
  setSummaries(summaries: RaceSummary[]): void {
    for (const s of summaries) {
      this.races.set(s.raceId, s);
      if (!raceIsActive(s.state)) this.phases.delete(s.raceId);
      for (const a of s.agents) {
        if (a.state === 'running' && !this.startedAt.has(key(s.raceId, a.agentId))) {
          this.startedAt.set(key(s.raceId, a.agentId), this.now() - a.elapsedMs);
        }
      }
    }
    this.fire();
  }

  hasRankings(raceId: string): boolean {
    return this.rankings.has(raceId);
  }

  /** The race's rankings, once it is scored (its raceFinished, or hydra/scores). */
  rankingsOf(raceId: string): Ranking[] | undefined {
    return this.rankings.get(raceId);
  }

  /** Which agent of the race was merged, if one was: then the race offers no merge. */
  mergedOf(raceId: string): MergedRecord | undefined {
    return this.races.get(raceId)?.merged;
  }

  /**
   * A merge this window made (hydra/merge's answer), shown at once; hydra's
   * record of it comes with the next refresh. A conflict merged nothing.
   */
  merged(raceId: string, result: MergeResult): void {
    const race = this.races.get(raceId);
    if (!race || result.dryRun || result.outcome === 'conflict') return;
    race.merged = {
      agentId: result.agentId,
      outcome: result.outcome,
      targetBranch: result.targetBranch,
      commit: result.commit,
      mergedAt: new Date(this.now()).toISOString(),
    };
    this.fire();
  }

  winnerOf(raceId: string): string | null | undefined {
    return this.winners.get(raceId);
  }

  /** The winner from the race's scores, else the one its summary records ("builder@2" for a collaboration). */
  recordedWinnerOf(raceId: string): string | null | undefined {
    return this.winners.get(raceId) ?? this.races.get(raceId)?.winner;
  }

  /** What a running collaboration is doing: as its notifications said, else as its summary suggests. */
  phaseOf(raceId: string): LivePhase | undefined {
    const race = this.races.get(raceId);
    if (!race || !raceIsActive(race.state)) return undefined;
    return this.phases.get(raceId) ?? phaseFromSummary(race);
  }

  /** Whether every agent of the race failed, so that it has no winner: from its scores, else its summary. */
  allFailedIn(raceId: string): boolean {
    return this.allFailed.get(raceId) ?? this.races.get(raceId)?.allFailed === true;
  }

  /** A race's scores (hydra/scores): its rankings and winner. */
  setScores(raceId: string, scores: Pick<ScoresResult, 'rankings' | 'winner'> & Partial<Pick<ScoresResult, 'allFailed'>>): void {
    this.rankings.set(raceId, scores.rankings);
    this.winners.set(raceId, scores.winner);
    if (scores.allFailed !== undefined) this.allFailed.set(raceId, scores.allFailed);
    this.fire();
  }

  /** A race this session just started (hydra/race's answer). */
  raceStarted(task: string, result: RaceResult): void {
    this.races.set(result.raceId, {
      raceId: result.raceId,
      task,
      state: 'running',
      createdAt: new Date(this.now()).toISOString(),
      baseCommit: '',
      agents: result.agents.map((a) => ({ ...a, state: 'queued', elapsedMs: 0 })),
    });
    this.fire();
  }

  /** A collaboration this session just started (hydra/collab's answer). */
  collabStarted(task: string, result: CollabResult): void {
    this.races.set(result.raceId, {
      raceId: result.raceId,
      kind: 'collab',
      task: result.task ?? task,
      state: result.state ?? 'running',
      createdAt: result.createdAt ?? new Date(this.now()).toISOString(),
      baseCommit: result.baseCommit ?? '',
      agents: result.agents.map((a): AgentState => ({ state: 'queued', elapsedMs: 0, ...a })),
      collaboration: result.collaboration,
      iterations: result.iterations ?? [],
    });
    this.fire();
  }

  agentStarted(p: AgentStartedParams): void {
    const agent = this.agent(p.raceId, p.agentId);
    if (!agent) return;
    agent.state = 'running';
    // A collaboration's agent runs once per round: this run's time starts now.
    if (p.phase) agent.elapsedMs = 0;
    this.startedAt.set(key(p.raceId, p.agentId), this.now());
    if (p.phase && p.iteration !== undefined) this.phases.set(p.raceId, { phase: p.phase, iteration: p.iteration });
    this.fire();
  }

  agentFinished(p: AgentFinishedParams): void {
    const agent = this.agent(p.raceId, p.agentId);
    if (!agent) return;
    agent.state = p.status;
    agent.elapsedMs = p.durationMs;
    agent.exitCode = p.exitCode;
    if (p.error) agent.error = p.error;
    if (p.warnings?.length) agent.warnings = p.warnings;
    if (p.stderrTail) agent.stderrTail = p.stderrTail;
    if (p.deniedToolCalls !== undefined) agent.deniedToolCalls = p.deniedToolCalls;
    this.startedAt.delete(key(p.raceId, p.agentId));
    this.fire();
  }

  /** A race's scoring; in a collaboration, `iteration`'s (the collaboration runs on afterwards). */
  scoringStarted(raceId: string, iteration?: number): void {
    const race = this.races.get(raceId);
    if (!race) return;
    if (iteration !== undefined || isCollab(race)) {
      const at = iteration ?? this.phases.get(raceId)?.iteration ?? (race.iterations?.length ?? 0) + 1;
      this.phases.set(raceId, { phase: 'scoring', iteration: at });
    } else {
      race.state = 'scoring';
    }
    this.fire();
  }

  /** A collaboration's iteration is done: recorded with its score and review; the phase moves on. */
  iterationFinished(p: IterationFinishedParams): void {
    const race = this.races.get(p.raceId);
    if (!race) return;
    const iterations = (race.iterations ?? []).filter((i) => i.iteration !== p.iteration);
    race.iterations = [...iterations, iterationFromNotification(p)].sort((a, b) => a.iteration - b.iteration);
    if (p.score) {
      const ranking = { ...p.score, agentId: iterationAgentId(p.iteration) };
      const known = (this.rankings.get(p.raceId) ?? []).filter((r) => r.agentId !== ranking.agentId);
      this.rankings.set(p.raceId, [...known, ranking]);
    }
    if (p.next === 'refine') {
      this.phases.set(p.raceId, { phase: 'refine', iteration: p.iteration + 1 });
    } else {
      this.phases.delete(p.raceId);
      if (p.stopReason && race.collaboration) race.collaboration.stopReason = p.stopReason;
    }
    this.fire();
  }

  raceFinished(p: RaceFinishedParams): void {
    const race = this.races.get(p.raceId);
    if (race) {
      race.state = p.status;
      race.finishedAt = new Date(this.now()).toISOString();
      if (p.stopReason && race.collaboration) race.collaboration.stopReason = p.stopReason;
    }
    this.phases.delete(p.raceId);
    this.rankings.set(p.raceId, p.rankings);
    this.winners.set(p.raceId, p.winner);
    this.allFailed.set(p.raceId, p.allFailed);
    // What auto_merge merged is merged: hydra's record of it comes with the next refresh.
    const auto = p.autoMerge;
    if (race && auto && (auto.outcome === 'fastForward' || auto.outcome === 'merged')) {
      race.merged = {
        agentId: auto.agentId,
        outcome: auto.outcome,
        targetBranch: auto.targetBranch ?? '',
        commit: auto.commit,
        mergedAt: race.finishedAt ?? new Date(this.now()).toISOString(),
        automatic: true,
      };
    }
    this.fire();
  }

  private agent(raceId: string, agentId: string) {
    return this.races.get(raceId)?.agents.find((a) => a.agentId === agentId);
  }

  private fire(): void {
    for (const l of [...this.listeners]) l();
  }
}

function key(raceId: string, agentId: string): string {
  return `${raceId}/${agentId}`;
}
