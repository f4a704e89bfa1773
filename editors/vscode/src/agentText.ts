// An agent's text as hydra has it, written into whatever shows it (an
// output channel, output.ts; a terminal, outputTerminals.ts): what a live
// agent printed (hydra/agentOutput), how it ended (hydra/agentFinished), and
// for an agent this window did not watch, what hydra stored of it.
import * as proto from './protocol';
import type { HydraSession } from './session';
import { finishedDetails, finishedNote, outputText, transcriptText } from './format';

const LOG_PAGE = 256 * 1024;
const EVENTS_PAGE = 1000;

/** Where an agent's text goes; it makes the text's control characters visible itself. */
export interface AgentTextSink {
  append(text: string): void;
  appendLine(text: string): void;
}

/** What a hydra/agentOutput notification says. */
export function writeOutput(sink: AgentTextSink, p: proto.AgentOutputParams): void {
  sink.append(outputText(p));
}

/** How an agent ended, as hydra/agentFinished says. */
export function writeFinished(sink: AgentTextSink, p: proto.AgentFinishedParams): void {
  sink.appendLine(finishedNote(p.agentId, p.status, p.exitCode, p.error));
  for (const line of finishedDetails(p)) sink.appendLine(line);
  for (const escape of p.escapes ?? []) sink.appendLine(`[hydra: outside its worktree: ${escape}]`);
}

/**
 * What hydra stored of an agent this window did not watch: its events as a
 * transcript, then how it ended. An agent whose adapter reads nothing of
 * its output (a plain command) stored no event worth a line: its log is
 * all there is.
 * False when hydra did not answer.
 */
export async function loadTranscript(session: HydraSession, sink: AgentTextSink, raceId: string, agentId: string): Promise<boolean> {
  const events: proto.AgentEvent[] = [];
  let offset: number | undefined = 0;
  while (offset !== undefined) {
    const page: proto.AgentEventsResult | undefined =
      await session.request(proto.agentEvents, { raceId, agentId, offset, limit: EVENTS_PAGE });
    if (!page) return false;
    events.push(...page.events);
    offset = page.nextOffset !== undefined && page.nextOffset > offset ? page.nextOffset : undefined;
  }
  const transcript = transcriptText(events);
  if (transcript !== '') {
    sink.appendLine(`[hydra: ${agentId} in race ${raceId}, as hydra recorded it; Hydra: Show Agent Raw Log has its output as printed]`);
    sink.append(transcript);
  } else {
    await loadLog(session, sink, raceId, agentId);
  }
  const agent = session.store.get(raceId)?.agents.find((a) => a.agentId === agentId);
  if (agent && agent.state !== 'queued' && agent.state !== 'running') {
    sink.appendLine(finishedNote(agentId, agent.state, agent.exitCode, agent.error));
    const summarised = events.flatMap((e) => (e.kind === 'summary' ? e.warnings ?? [] : []));
    for (const line of finishedDetails(agent, transcript !== '' ? summarised : [])) sink.appendLine(line);
  }
  return true;
}

/** The agent's whole stdout, a page at a time, then its stderr. */
export async function loadLog(session: HydraSession, sink: AgentTextSink, raceId: string, agentId: string): Promise<void> {
  for (const stream of ['stdout', 'stderr'] as const) {
    let offset = 0;
    for (;;) {
      const page = await session.request(proto.log, { raceId, agentId, offset, limit: LOG_PAGE, stream });
      if (!page) return;
      if (page.data) sink.append(stream === 'stderr' ? prefixLines(page.data, '[stderr] ') : page.data);
      if (page.nextOffset >= page.totalSize || page.nextOffset === offset) break;
      offset = page.nextOffset;
    }
  }
}

function prefixLines(text: string, prefix: string): string {
  return text.replace(/^(?=.)/gm, prefix);
}
