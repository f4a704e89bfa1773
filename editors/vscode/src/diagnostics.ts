// Problems as diagnostics, in one collection named "hydra" (the Problems
// panel, squiggles on the lines):
//  - hydra.toml's, as hydra publishes them (textDocument/publishDiagnostics):
//    hydra reads the file every two seconds, so a fix clears them without a
//    request; an empty list clears them; one hydra puts on one character
//    covers the key or value there;
//  - each scored race's build and lint findings, on the agents' versions of
//    the files (in their worktrees), until the race is merged or its
//    worktrees are removed.
import * as fs from 'fs';
import * as vscode from 'vscode';
import type { Diagnostic as LspDiagnostic, PublishDiagnosticsParams } from 'vscode-languageclient/node';
import type { HydraSession } from './session';
import { type PlacedFinding, placeFindings } from './findings';
import { widenedRange } from './configProblem';

const SEVERITIES = [
  vscode.DiagnosticSeverity.Error, vscode.DiagnosticSeverity.Warning,
  vscode.DiagnosticSeverity.Information, vscode.DiagnosticSeverity.Hint,
];

/** hydra.toml's lines as on disk (hydra reads the file there), to widen its diagnostics to their keys. */
function linesOf(uri: vscode.Uri): string[] {
  try {
    return fs.readFileSync(uri.fsPath, 'utf8').split(/\r?\n/);
  } catch {
    return [];
  }
}

function fromLsp(d: LspDiagnostic, lines: string[]): vscode.Diagnostic {
  // hydra names a line and column: the squiggle covers the key or value there, not one character.
  const { start, end } = widenedRange(lines, d.range);
  const diagnostic = new vscode.Diagnostic(new vscode.Range(start.line, start.character, end.line, end.character), d.message,
    SEVERITIES[(d.severity ?? 1) - 1] ?? vscode.DiagnosticSeverity.Error);
  diagnostic.source = d.source ?? 'hydra';
  if (d.code !== undefined) diagnostic.code = d.code;
  return diagnostic;
}

function fromFinding(f: PlacedFinding): vscode.Diagnostic {
  // At the column the tool named (VS Code marks the word there), else the whole line.
  const range = f.column !== undefined
    ? new vscode.Range(f.line, f.column, f.line, f.column)
    : new vscode.Range(f.line, 0, f.line, Number.MAX_SAFE_INTEGER);
  const diagnostic = new vscode.Diagnostic(range, f.message,
    f.severity === 'warning' ? vscode.DiagnosticSeverity.Warning : vscode.DiagnosticSeverity.Error);
  diagnostic.source = `hydra ${f.check}`;
  return diagnostic;
}

class Diagnostics implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection('hydra');
  // The files hydra published problems for.
  private readonly published = new Set<string>();
  // The files findings are shown on, each with what is shown (to set only what changed).
  private shown = new Map<string, string>();

  constructor(private readonly session: HydraSession) {}

  publish(p: PublishDiagnosticsParams): void {
    const uri = vscode.Uri.parse(p.uri);
    if (p.diagnostics.length === 0) {
      this.collection.delete(uri);
      this.published.delete(uri.toString());
      return;
    }
    const lines = linesOf(uri);
    this.collection.set(uri, p.diagnostics.map((d) => fromLsp(d, lines)));
    this.published.add(uri.toString());
  }

  /** A new hydra publishes afresh, and says nothing of a file whose problems were fixed meanwhile. */
  forgetPublished(): void {
    for (const uri of this.published) this.collection.delete(vscode.Uri.parse(uri));
    this.published.clear();
  }

  /** The findings of every scored race whose worktrees are still there and that was not merged. */
  showFindings(): void {
    const store = this.session.store;
    const byFile = new Map<string, PlacedFinding[]>();
    for (const race of store.list()) {
      const rankings = store.rankingsOf(race.raceId);
      if (!rankings || race.merged) continue;
      for (const agent of race.agents) {
        const ranking = rankings.find((r) => r.agentId === agent.agentId);
        if (!ranking || !agent.worktree || !fs.existsSync(agent.worktree)) continue;
        for (const f of placeFindings(agent.worktree, ranking.checks)) {
          const list = byFile.get(f.file) ?? [];
          list.push(f);
          byFile.set(f.file, list);
        }
      }
    }
    const next = new Map<string, string>();
    for (const [file, findings] of byFile) {
      const key = JSON.stringify(findings);
      next.set(file, key);
      if (this.shown.get(file) !== key) this.collection.set(vscode.Uri.file(file), findings.map(fromFinding));
    }
    for (const file of this.shown.keys()) if (!next.has(file)) this.collection.delete(vscode.Uri.file(file));
    this.shown = next;
  }

  dispose(): void {
    this.collection.dispose();
  }
}

export function activate(context: vscode.ExtensionContext, session: HydraSession): void {
  const diagnostics = new Diagnostics(session);
  context.subscriptions.push(
    diagnostics,
    session.onDiagnostics.event((p) => diagnostics.publish(p)),
    session.onStarting.event(() => diagnostics.forgetPublished()),
    session.store.onDidChange(() => diagnostics.showFindings()),
  );
}
