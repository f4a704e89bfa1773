// One output channel per agent, filled from hydra/agentOutput while the race
// runs. "Show Agent Output" opens it; for a race from another session, or
// when notifications left lines out, it reloads the full log from hydra/log.
import * as vscode from 'vscode';
import * as proto from './protocol';
import type { HydraSession } from './session';
import { outputText } from './format';
import { resolveAgent } from './pick';

const LOG_PAGE = 256 * 1024;

class AgentOutputs implements vscode.Disposable {
  private readonly channels = new Map<string, vscode.OutputChannel>();
  // Channels whose notifications left lines out: the next show reloads them from the log.
  private readonly incomplete = new Set<string>();

  constructor(private readonly session: HydraSession) {}

  append(p: proto.AgentOutputParams): void {
    const key = `${p.raceId}/${p.agentId}`;
    this.channel(p.raceId, p.agentId).append(outputText(p));
    if (p.droppedLines) this.incomplete.add(key);
  }

  finished(p: proto.AgentFinishedParams): void {
    const exit = p.exitCode === null ? '' : `, exit code ${p.exitCode}`;
    this.channel(p.raceId, p.agentId).appendLine(`[hydra: ${p.agentId} ${p.status}${exit}${p.error ? ': ' + p.error : ''}]`);
  }

  async show(raceId: string, agentId: string): Promise<void> {
    const key = `${raceId}/${agentId}`;
    const known = this.channels.has(key);
    const channel = this.channel(raceId, agentId);
    if (!known || this.incomplete.has(key)) {
      channel.clear();
      await this.load(channel, raceId, agentId);
      this.incomplete.delete(key);
    }
    channel.show(true);
  }

  dispose(): void {
    for (const c of this.channels.values()) c.dispose();
  }

  private channel(raceId: string, agentId: string): vscode.OutputChannel {
    const key = `${raceId}/${agentId}`;
    let channel = this.channels.get(key);
    if (!channel) {
      channel = vscode.window.createOutputChannel(`Hydra: ${agentId} (${raceId})`);
      this.channels.set(key, channel);
    }
    return channel;
  }

  /** The agent's whole stdout, a page at a time, then its stderr. */
  private async load(channel: vscode.OutputChannel, raceId: string, agentId: string): Promise<void> {
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
  );
}
