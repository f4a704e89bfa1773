// One output channel per agent, filled from hydra/agentOutput while the race
// runs. "Show Agent Output" opens it; for an agent this window did not watch
// (an older race, or one from before a restart) it holds a transcript of what
// hydra stored (hydra/agentEvents), and when notifications left lines out it
// reloads the full log. "Show Agent Raw Log" shows hydra/log as printed.
// What is loaded, and how, is agentText.ts': the terminals of "Show All
// Agents' Output" (outputTerminals.ts) load the same.
import * as vscode from 'vscode';
import * as proto from './protocol';
import type { HydraSession } from './session';
import { visibleControls } from './format';
import { resolveAgent } from './pick';
import { type AgentTextSink, loadLog, loadTranscript, writeFinished, writeOutput } from './agentText';

/**
 * An output channel that shows an agent's text as text: every control
 * character it printed is made visible (format.ts, visibleControls), so a
 * sequence meant for a terminal shows as what it is and drives nothing.
 */
class AgentChannel implements AgentTextSink, vscode.Disposable {
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
    writeOutput(this.channel(this.channels, p.raceId, p.agentId), p);
    if (p.droppedLines) this.incomplete.add(key);
  }

  finished(p: proto.AgentFinishedParams): void {
    writeFinished(this.channel(this.channels, p.raceId, p.agentId), p);
  }

  async show(raceId: string, agentId: string): Promise<void> {
    const key = `${raceId}/${agentId}`;
    const known = this.channels.has(key);
    const channel = this.channel(this.channels, raceId, agentId);
    if (!known) {
      if (!(await loadTranscript(this.session, channel, raceId, agentId))) {
        // hydra could not say (its error is shown): the next show asks again.
        this.channels.delete(key);
        channel.dispose();
        return;
      }
    } else if (this.incomplete.has(key)) {
      channel.clear();
      await loadLog(this.session, channel, raceId, agentId);
      this.incomplete.delete(key);
    }
    channel.show(true);
  }

  /** The agent's log as it printed it, read again each time. */
  async showRaw(raceId: string, agentId: string): Promise<void> {
    const channel = this.channel(this.rawLogs, raceId, agentId, ' raw log');
    channel.clear();
    await loadLog(this.session, channel, raceId, agentId);
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
