// What the extension knows about races: the summaries hydra/status and
// hydra/races return, kept current by the notifications of the races this
// session runs. The tree view and the status bar read it. No VS Code imports:
// the unit tests drive it with recorded notifications.
import type {
  AgentFinishedParams, AgentStartedParams, MergeResult, MergedRecord, RaceFinishedParams, RaceResult, RaceSummary, Ranking,
  ScoresResult,
} from './protocol';
import { raceIsActive } from './format';

type Listener = () => void;

export class RaceStore {
  private readonly races = new Map<string, RaceSummary>();
  private readonly rankings = new Map<string, Ranking[]>();
  private readonly winners = new Map<string, string | null>();
  // Races scored without a winner: every agent failed.
  private readonly allFailed = new Map<string, boolean>();
  // When each running agent started, on this machine's clock, for a live elapsed time.
  private readonly startedAt = new Map<string, number>();
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

  agentStarted(p: AgentStartedParams): void {
    const agent = this.agent(p.raceId, p.agentId);
    if (!agent) return;
    agent.state = 'running';
    this.startedAt.set(key(p.raceId, p.agentId), this.now());
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

  scoringStarted(raceId: string): void {
    const race = this.races.get(raceId);
    if (!race) return;
    race.state = 'scoring';
    this.fire();
  }

  raceFinished(p: RaceFinishedParams): void {
    const race = this.races.get(p.raceId);
    if (race) {
      race.state = p.status;
      race.finishedAt = new Date(this.now()).toISOString();
    }
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
