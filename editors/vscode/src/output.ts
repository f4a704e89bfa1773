// One output channel per agent, filled from hydra/agentOutput while the race
// runs. "Show Agent Output" opens it; for an agent this window did not watch
// (an older race, or one from before a restart) it holds a transcript of what
// hydra stored (hydra/agentEvents), and when notifications left lines out it
// reloads the full log. "Show Agent Raw Log" shows hydra/log as printed.
import * as vscode from 'vscode';
import * as proto from './protocol';
import type { HydraSession } from './session';
import { finishedDetails, finishedNote, outputText, transcriptText, visibleControls } from './format';
import { resolveAgent } from './pick';

const LOG_PAGE = 256 * 1024;
const EVENTS_PAGE = 1000;

/**
 * An output channel that shows an agent's text as text: every control
 * character it printed is made visible (format.ts, visibleControls), so a
 * sequence meant for a terminal shows as what it is and drives nothing.
 */
class AgentChannel implements vscode.Disposable {
  constructor(private readonly channel: vscode.OutputChannel) {}
  append(text: string): void { this.channel.append(visibleControls(text)); }
  appendLine(text: string): void { this.channel.appendLine(visibleControls(text)); }
  clear(): void { this.channel.clear(); }
  show(preserveFocus: boolean): void { this.channel.show(preserveFocus); }
  dispose(): void { this.channel.dispose(); }
}

class AgentOutputs implements vscode.Disposable {
  private readonly channels = new Map<string, AgentChannel>();
  private readonly rawLogs = new Map<string, AgentChannel>();
  // Channels filled live whose notifications left lines out: the next show reloads them from the log.
  private readonly incomplete = new Set<string>();

  constructor(private readonly session: HydraSession) {}

  append(p: proto.AgentOutputParams): void {
    const key = `${p.raceId}/${p.agentId}`;
    this.channel(this.channels, p.raceId, p.agentId).append(outputText(p));
    if (p.droppedLines) this.incomplete.add(key);
  }

  finished(p: proto.AgentFinishedParams): void {
    const channel = this.channel(this.channels, p.raceId, p.agentId);
    channel.appendLine(finishedNote(p.agentId, p.status, p.exitCode, p.error));
    for (const line of finishedDetails(p)) channel.appendLine(line);
    for (const escape of p.escapes ?? []) channel.appendLine(`[hydra: outside its worktree: ${escape}]`);
  }

  async show(raceId: string, agentId: string): Promise<void> {
    const key = `${raceId}/${agentId}`;
    const known = this.channels.has(key);
    const channel = this.channel(this.channels, raceId, agentId);
    if (!known) {
      if (!(await this.loadTranscript(channel, raceId, agentId))) {
        // hydra could not say (its error is shown): the next show asks again.
        this.channels.delete(key);
        channel.dispose();
        return;
      }
    } else if (this.incomplete.has(key)) {
      channel.clear();
      await this.loadLog(channel, raceId, agentId);
      this.incomplete.delete(key);
    }
    channel.show(true);
  }

  /** The agent's log as it printed it, read again each time. */
  async showRaw(raceId: string, agentId: string): Promise<void> {
    const channel = this.channel(this.rawLogs, raceId, agentId, ' raw log');
    channel.clear();
    await this.loadLog(channel, raceId, agentId);
    channel.show(true);
  }

  dispose(): void {
    for (const c of [...this.channels.values(), ...this.rawLogs.values()]) c.dispose();
  }

  private channel(channels: Map<string, AgentChannel>, raceId: string, agentId: string, suffix = ''): AgentChannel {
    const key = `${raceId}/${agentId}`;
    let channel = channels.get(key);
    if (!channel) {
      channel = new AgentChannel(vscode.window.createOutputChannel(visibleControls(`Hydra: ${agentId} (${raceId})${suffix}`)));
      channels.set(key, channel);
    }
    return channel;
  }

  /**
   * What hydra stored of an agent this window did not watch: its events as a
   * transcript, then how it ended. An agent whose adapter reads nothing of
   * its output (a plain command) stored no event worth a line: its log is
   * all there is.
   * False when hydra did not answer.
   */
  private async loadTranscript(channel: AgentChannel, raceId: string, agentId: string): Promise<boolean> {
    const events: proto.AgentEvent[] = [];
    let offset: number | undefined = 0;
    while (offset !== undefined) {
      const page: proto.AgentEventsResult | undefined =
        await this.session.request(proto.agentEvents, { raceId, agentId, offset, limit: EVENTS_PAGE });
      if (!page) return false;
      events.push(...page.events);
      offset = page.nextOffset !== undefined && page.nextOffset > offset ? page.nextOffset : undefined;
    }
    const transcript = transcriptText(events);
    if (transcript !== '') {
      channel.appendLine(`[hydra: ${agentId} in race ${raceId}, as hydra recorded it; Hydra: Show Agent Raw Log has its output as printed]`);
      channel.append(transcript);
    } else {
      await this.loadLog(channel, raceId, agentId);
    }
    const agent = this.session.store.get(raceId)?.agents.find((a) => a.agentId === agentId);
    if (agent && agent.state !== 'queued' && agent.state !== 'running') {
      channel.appendLine(finishedNote(agentId, agent.state, agent.exitCode, agent.error));
      const summarised = events.flatMap((e) => (e.kind === 'summary' ? e.warnings ?? [] : []));
      for (const line of finishedDetails(agent, transcript !== '' ? summarised : [])) channel.appendLine(line);
    }
    return true;
  }

  /** The agent's whole stdout, a page at a time, then its stderr. */
  private async loadLog(channel: AgentChannel, raceId: string, agentId: string): Promise<void> {
    for (const stream of ['stdout', 'stderr'] as const) {
      let offset = 0;
      for (;;) {
        const page = await this.session.request(proto.log, { raceId, agentId, offset, limit: LOG_PAGE, stream });
        if (!page) return;
        if (page.data) channel.append(stream === 'stderr' ? prefixLines(page.data, '[stderr] ') : page.data);
        if (page.nextOffset >= page.totalSize || page.nextOffset === offset) break;
        offset = page.nextOffset;
      }
    }
  }
}

function prefixLines(text: string, prefix: string): string {
  return text.replace(/^(?=.)/gm, prefix);
}

export function activate(context: vscode.ExtensionContext, session: HydraSession): void {
  const outputs = new AgentOutputs(session);
  context.subscriptions.push(
    outputs,
    session.onAgentOutput.event((p) => outputs.append(p)),
    session.onAgentFinished.event((p) => outputs.finished(p)),
    vscode.commands.registerCommand('hydra.showAgentOutput', async (arg?: unknown) => {
      const chosen = await resolveAgent(session, arg, 'show the output of');
      if (chosen) await outputs.show(chosen.race.raceId, chosen.agent.agentId);
    }),
    vscode.commands.registerCommand('hydra.showAgentRawLog', async (arg?: unknown) => {
      const chosen = await resolveAgent(session, arg, 'show the raw log of');
      if (chosen) await outputs.showRaw(chosen.race.raceId, chosen.agent.agentId);
    }),
  );
}
