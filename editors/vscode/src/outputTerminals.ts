// Every agent's output at once: one terminal per agent of a race, named in
// full ("hydra: fixer (20261128-1)": agent and the race's short id), split
// side by side in the panel, where an output channel shows one agent at a
// time under a truncated name. "Show All Agents' Output" opens a race's
// (by rank once it is scored), filled with what hydra stored of each agent
// (agentText.ts, as Show Agent Output loads it), then live; with
// hydra.showAllOutputsOnRaceStart each agent's opens as it starts.
// The terminals only show text: an agent's text is written with every
// control character made visible (format.ts, terminalText), so nothing an
// agent printed drives the terminal, and no key typed there goes anywhere.
import * as vscode from 'vscode';
import type { HydraSession } from './session';
import { byRank, terminalText, visibleControls } from './format';
import { ensureRankings, pickRace, shortIdOf, targetOf } from './pick';
import { type AgentTextSink, loadTranscript, writeFinished, writeOutput } from './agentText';

type Write = (sink: AgentTextSink) => void;

/** One agent's terminal: a pseudoterminal that only writes. */
class AgentTerminal implements vscode.Pseudoterminal, AgentTextSink {
  private readonly writer = new vscode.EventEmitter<string>();
  readonly onDidWrite = this.writer.event;
  // What was written before VS Code opened the terminal: a pseudoterminal's writes before open() are lost.
  private pending: string[] | undefined = [];
  // Live text that came while the stored transcript loaded: written after it.
  private held: Write[] | undefined;
  terminal: vscode.Terminal | undefined;

  constructor(readonly raceId: string, private readonly closed: () => void) {}

  open(): void {
    const pending = this.pending ?? [];
    this.pending = undefined;
    for (const text of pending) this.writer.fire(text);
  }

  close(): void {
    this.closed();
  }

  append(text: string): void {
    this.write(terminalText(text));
  }

  appendLine(text: string): void {
    this.write(terminalText(`${text}\n`));
  }

  /** Live text (hydra/agentOutput, hydra/agentFinished): behind the stored transcript while that loads. */
  live(write: Write): void {
    if (this.held) this.held.push(write);
    else write(this);
  }

  /**
   * What hydra stored of the agent, then the live text held meanwhile (of an
   * agent still running, a line or two at the seam may show twice; none is lost).
   */
  async fill(load: (sink: AgentTextSink) => Promise<unknown>): Promise<void> {
    this.held = [];
    try {
      await load(this);
    } finally {
      const held = this.held;
      this.held = undefined;
      for (const write of held) write(this);
    }
  }

  dispose(): void {
    this.terminal?.dispose();
    this.writer.dispose();
  }

  private write(text: string): void {
    if (this.pending) this.pending.push(text);
    else this.writer.fire(text);
  }
}

class AgentTerminals implements vscode.Disposable {
  private readonly terminals = new Map<string, AgentTerminal>();

  constructor(private readonly session: HydraSession) {}

  /** One terminal per agent of the race, side by side, best ranked first; an agent's that is open already is kept. */
  async showRace(raceId: string): Promise<void> {
    const race = this.session.store.get(raceId);
    if (!race) return;
    if (race.agents.length === 0) {
      void vscode.window.showInformationMessage(`Hydra: race ${raceId} has no agent yet.`);
      return;
    }
    await ensureRankings(this.session, race);
    const agents = byRank(race.agents, (id) => this.session.store.rankingOf(raceId, id)?.rank);
    const opened = agents.map((a) => this.open(raceId, a.agentId, true));
    opened[0].terminal?.show(true);
  }

  /** An agent that started: its terminal, when the setting asks for one, filled live from now on. */
  agentStarted(raceId: string, agentId: string): void {
    if (!vscode.workspace.getConfiguration('hydra').get<boolean>('showAllOutputsOnRaceStart', true)) return;
    // Started in this window: its output comes live, nothing stored is missing.
    this.open(raceId, agentId, false).terminal?.show(true);
  }

  live(raceId: string, agentId: string, write: Write): void {
    this.terminals.get(`${raceId}/${agentId}`)?.live(write);
  }

  dispose(): void {
    for (const t of [...this.terminals.values()]) t.dispose();
    this.terminals.clear();
  }

  /**
   * The agent's terminal, created when it has none: split beside a terminal
   * of the same race, or a new one in the panel. `load`: filled with what
   * hydra stored of the agent first.
   */
  private open(raceId: string, agentId: string, load: boolean): AgentTerminal {
    const key = `${raceId}/${agentId}`;
    const known = this.terminals.get(key);
    if (known) return known;
    const parent = [...this.terminals.values()].find((t) => t.raceId === raceId)?.terminal;
    const pty = new AgentTerminal(raceId, () => this.terminals.delete(key));
    this.terminals.set(key, pty);
    pty.terminal = vscode.window.createTerminal({
      name: visibleControls(`hydra: ${agentId} (${shortIdOf(this.session.store, raceId)})`),
      pty,
      location: parent ? { parentTerminal: parent } : vscode.TerminalLocation.Panel,
      // A pseudoterminal cannot be brought back after a reload: VS Code must not try.
      isTransient: true,
    });
    if (load) void pty.fill((sink) => loadTranscript(this.session, sink, raceId, agentId));
    return pty;
  }
}

export function activate(context: vscode.ExtensionContext, session: HydraSession): void {
  const terminals = new AgentTerminals(session);
  context.subscriptions.push(
    terminals,
    session.onAgentStarted.event((p) => terminals.agentStarted(p.raceId, p.agentId)),
    session.onAgentOutput.event((p) => terminals.live(p.raceId, p.agentId, (sink) => writeOutput(sink, p))),
    session.onAgentFinished.event((p) => terminals.live(p.raceId, p.agentId, (sink) => writeFinished(sink, p))),
    vscode.commands.registerCommand('hydra.showAllOutputs', async (arg?: unknown) => {
      const raceId = targetOf(arg)?.raceId ?? (await pickRace(session, 'The race whose agents\' output to show'))?.raceId;
      if (raceId) await terminals.showRace(raceId);
    }),
  );
}
