// Evaluation mode: Run Eval Set (hydra/evalRun on an eval set's TOML: the
// explorer's, the active editor's, or one picked) and Open Eval Report
// (hydra/evalReport on a report's JSON), both into one webview panel per
// report, "Hydra Eval: NAME". While an evaluation of this window runs, its
// progress is a notification whose Cancel cancels it (progress.ts, as a
// race's), and its panel counts the samples as hydra/evalSample comes and
// redraws its tables from hydra/evalReport at most once a second; at
// hydra/evalFinished it shows the final report, how it ended and where the
// report is.
import * as vscode from 'vscode';
import { randomBytes } from 'crypto';
import * as proto from './protocol';
import type { HydraSession } from './session';
import { describeServerError } from './format';
import { renderEvalReport } from './evalHtml';
import {
  type EvalProgress, type EvalRunRequest, type EvalSetProblem, Throttle, evalEnded, evalRefusal, evalRunRequest, evalSetProblem, evalStarted,
  interrupted, isEvalSetFile, progressText, sampleFinished, statusText,
} from './evalModel';
import { trackProgress } from './progress';

/** At most one hydra/evalReport per this many milliseconds while an evaluation runs. */
const REFRESH_MS = 1000;

/** A report's panel. */
interface ReportView {
  panel: vscode.WebviewPanel;
  name: string;
  /** The report's path, as hydra gave it. */
  path: string;
  report?: proto.EvalReport;
  /** The evaluation of this window that writes the report, while it runs and once it ended. */
  progress?: EvalProgress;
}

/** An evaluation this window started, until it ends. */
interface Run {
  progress: EvalProgress;
  /** Its report's path as hydra/evalRun gave it: its panel's key. */
  key: string;
  refresh: Throttle;
}

class EvalReports implements vscode.Disposable {
  /** By report path. */
  private readonly views = new Map<string, ReportView>();
  /** By evalId. */
  private readonly runs = new Map<string, Run>();

  constructor(private readonly session: HydraSession) {}

  /** Runs an eval set: the set given, the active editor's, or one picked; then its panel, at once. */
  async run(arg: unknown): Promise<void> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage(
        'Hydra: evaluations run the commands in hydra.toml and the eval set, so they start only in a trusted workspace.',
        'Manage Workspace Trust',
      ).then((c) => c && vscode.commands.executeCommand('workbench.trust.manage'));
      return;
    }
    const chosen = await evalSetToRun(arg);
    if (!chosen) return;
    const { request, fromEditor } = chosen;
    const progress = await trackProgress(this.session, 'eval');
    const since = this.session.messagesSoFar;
    let result: proto.EvalRunResult;
    try {
      result = await this.session.requestOrThrow(proto.evalRun, { ...request, workDoneToken: progress.token });
    } catch (error) {
      progress.abandon();
      await this.refused(error, since);
      return;
    }
    const run: Run = {
      progress: evalStarted(result),
      key: result.report,
      refresh: new Throttle(() => this.refresh(result.evalId), REFRESH_MS),
    };
    this.runs.set(result.evalId, run);
    // Run from the set's editor, the panel opens beside it and the keyboard stays there.
    const view = this.show(result.report, result.name, undefined, fromEditor ? 'beside' : 'active');
    view.progress = run.progress;
    this.render(view);
    // A resumed report has samples already.
    if (result.done > 0) run.refresh.schedule();
    vscode.window.setStatusBarMessage(
      `Hydra: evaluation ${result.name} started: ${result.agents.join(', ')} × ${result.samples} sample(s) of ${result.cases} case(s)`, 10000);
  }

  /** Opens a report: the one given, or one picked (under .hydra/evals/ first). */
  async open(arg: unknown): Promise<void> {
    const file = arg instanceof vscode.Uri ? arg.fsPath : await pickReport();
    if (!file) return;
    const answer = await this.session.request(proto.evalReport, { report: file });
    if (!answer) return;
    const view = this.show(answer.path, answer.report.name, answer.report);
    // The report of an evaluation still running here follows it.
    view.progress = [...this.runs.values()].find((r) => r.key === answer.path)?.progress ?? view.progress;
    this.render(view);
  }

  sample(p: proto.EvalSampleParams): void {
    const run = this.runs.get(p.evalId);
    if (!run) return;
    run.progress = sampleFinished(run.progress, p);
    const view = this.views.get(run.key);
    if (view) {
      view.progress = run.progress;
      const { done, total, solved } = run.progress;
      void view.panel.webview.postMessage({ type: 'progress', text: progressText(run.progress), done, total, solved });
    }
    run.refresh.schedule();
  }

  async finished(p: proto.EvalFinishedParams): Promise<void> {
    const run = this.runs.get(p.evalId);
    if (!run) return;
    run.progress = evalEnded(run.progress, p);
    // The final report, after any refresh still under way: drawn last.
    await run.refresh.flush();
    run.refresh.dispose();
    this.runs.delete(p.evalId);
    const what = `Hydra: evaluation ${run.progress.name} ${statusText(run.progress)}`;
    if (this.views.has(run.key)) {
      vscode.window.setStatusBarMessage(what, 10000);
      return;
    }
    // Its panel was closed meanwhile.
    const choice = await vscode.window.showInformationMessage(what, 'Show Report');
    if (choice) {
      const answer = await this.session.request(proto.evalReport, { report: run.progress.report });
      if (!answer) return;
      const view = this.show(answer.path, answer.report.name, answer.report);
      view.progress = run.progress;
      this.render(view);
    }
  }

  /** hydra is starting again: the evaluations of the one before ended with it. */
  serverRestarted(): void {
    for (const [evalId, run] of this.runs) {
      run.refresh.dispose();
      run.progress = interrupted(run.progress);
      const view = this.views.get(run.key);
      if (view) {
        view.progress = run.progress;
        this.render(view);
      }
      this.runs.delete(evalId);
    }
  }

  dispose(): void {
    for (const run of this.runs.values()) run.refresh.dispose();
    for (const view of this.views.values()) view.panel.dispose();
  }

  /** hydra/evalReport for a running evaluation, drawn into its panel (none open: nothing asked). */
  private async refresh(evalId: string): Promise<void> {
    const run = this.runs.get(evalId);
    if (!run || !this.views.has(run.key)) return;
    let answer: proto.EvalReportResult | undefined;
    try {
      answer = await this.session.requestOrThrow(proto.evalReport, { evalId });
    } catch (error) {
      // While it runs the next sample asks again; at the end, the user is told.
      if (run.progress.status !== 'running') void vscode.window.showErrorMessage(`Hydra: ${describeServerError(error)}`);
    }
    const view = this.views.get(run.key);
    if (!view) return;
    if (answer) {
      view.report = answer.report;
      view.name = answer.report.name || view.name;
    }
    view.progress = run.progress;
    this.render(view);
  }

  /** An EvalSetError names the place (with a button that opens the set there); any other error is said in hydra's words. */
  private async refused(error: unknown, since: number): Promise<void> {
    const problem = evalSetProblem(error, proto.ErrorCodes.EvalSetError);
    if (!problem) {
      await this.session.showError(error, since);
      return;
    }
    const exists = await vscode.workspace.fs.stat(vscode.Uri.file(problem.file)).then(() => true, () => false);
    const open = 'Open Eval Set';
    const choice = await vscode.window.showErrorMessage(evalRefusal(error, problem), ...(exists ? [open] : []));
    if (choice === open) await openAt(problem);
  }

  /** The panel of the report at `path`, made if there is none, brought forward (`beside`: next to the active editor, which keeps the keyboard). */
  private show(path: string, name: string, report: proto.EvalReport | undefined, where: 'active' | 'beside' = 'active'): ReportView {
    const column = where === 'beside' ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active;
    const preserveFocus = where === 'beside';
    let view = this.views.get(path);
    if (!view) {
      const panel = vscode.window.createWebviewPanel('hydra.evalReport', `Hydra Eval: ${name}`, { viewColumn: column, preserveFocus }, {
        enableScripts: true,
        localResourceRoots: [],
      });
      const made: ReportView = { panel, name, path };
      view = made;
      this.views.set(path, made);
      panel.onDidDispose(() => this.views.delete(path));
      // A panel hidden and shown again is drawn from its html: the counts posted since are redrawn.
      let visible = panel.visible;
      panel.onDidChangeViewState((e) => {
        if (e.webviewPanel.visible && !visible) this.render(made);
        visible = e.webviewPanel.visible;
      });
      panel.webview.onDidReceiveMessage((message: { type?: string }) => this.received(made, message));
    } else {
      view.panel.reveal(where === 'beside' ? undefined : vscode.ViewColumn.Active, preserveFocus);
    }
    if (report) {
      view.report = report;
      view.name = report.name || name;
    }
    view.panel.title = `Hydra Eval: ${view.name}`;
    return view;
  }

  private async received(view: ReportView, message: { type?: string }): Promise<void> {
    if (message.type === 'openReport') {
      await vscode.window.showTextDocument(vscode.Uri.file(view.path), { preview: true });
    } else if (message.type === 'cancel' && view.progress?.status === 'running') {
      const evalId = view.progress.evalId;
      const answer = await this.session.request(proto.evalCancel, { evalId });
      if (answer && !answer.cancelled) void vscode.window.showInformationMessage(`Hydra: evaluation ${view.name} had already finished.`);
    }
  }

  private render(view: ReportView): void {
    view.panel.webview.html = renderEvalReport({
      cspSource: view.panel.webview.cspSource,
      nonce: randomBytes(16).toString('base64'),
      name: view.name,
      report: view.report,
      path: view.path,
      progress: view.progress,
    });
  }
}

/**
 * The set to run and how: the argument's (a file from the explorer, or
 * `{set, agents, samples, passK}` from a keybinding or another extension),
 * else the active editor's .toml file (saved first: hydra reads the file),
 * else one picked in an open dialog.
 */
async function evalSetToRun(arg: unknown): Promise<{ request: EvalRunRequest; fromEditor: boolean } | undefined> {
  if (arg instanceof vscode.Uri) return { request: { set: arg.fsPath }, fromEditor: false };
  const given = evalRunRequest(arg);
  if (typeof given === 'string') {
    void vscode.window.showErrorMessage(`Hydra: Run Eval Set: ${given}.`);
    return undefined;
  }
  if (given) return { request: given, fromEditor: false };
  const doc = vscode.window.activeTextEditor?.document;
  if (doc && doc.uri.scheme === 'file' && isEvalSetFile(doc.fileName)) {
    if (doc.isDirty) await doc.save();
    return { request: { set: doc.fileName }, fromEditor: true };
  }
  const picked = await vscode.window.showOpenDialog({
    title: 'Hydra: the eval set to run',
    openLabel: 'Run Eval Set',
    canSelectMany: false,
    defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
    filters: { 'Eval set': ['toml'] },
  });
  return picked?.[0] ? { request: { set: picked[0].fsPath }, fromEditor: false } : undefined;
}

/** A report picked in an open dialog, which starts in <repository>/.hydra/evals/ when there is one. */
async function pickReport(): Promise<string | undefined> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const evals = folder && vscode.Uri.joinPath(folder, '.hydra', 'evals');
  const hasEvals = evals && await vscode.workspace.fs.stat(evals).then(() => true, () => false);
  const picked = await vscode.window.showOpenDialog({
    title: 'Hydra: the eval report to open',
    openLabel: 'Open Eval Report',
    canSelectMany: false,
    defaultUri: hasEvals ? evals : folder,
    filters: { 'Eval report': ['json'] },
  });
  return picked?.[0]?.fsPath;
}

/** Opens the eval set with the cursor where hydra says it is broken (at its top when hydra does not know). */
async function openAt(problem: EvalSetProblem): Promise<void> {
  const at = new vscode.Position(Math.max(0, problem.line - 1), Math.max(0, problem.column - 1));
  await vscode.window.showTextDocument(vscode.Uri.file(problem.file), { selection: new vscode.Range(at, at) });
}

export function activate(context: vscode.ExtensionContext, session: HydraSession): void {
  const reports = new EvalReports(session);
  context.subscriptions.push(
    reports,
    vscode.commands.registerCommand('hydra.runEvalSet', (arg?: unknown) => reports.run(arg)),
    vscode.commands.registerCommand('hydra.openEvalReport', (arg?: unknown) => reports.open(arg)),
    session.onEvalSample.event((p) => reports.sample(p)),
    session.onEvalFinished.event((p) => void reports.finished(p)),
    session.onStarting.event(() => reports.serverRestarted()),
  );
}
