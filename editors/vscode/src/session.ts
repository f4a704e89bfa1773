// The connection to `hydra serve`: one LanguageClient (the real LSP transport,
// so $/progress, window/showMessage and tracing come from
// vscode-languageclient), the race store, and events for the race and
// evaluation notifications. A JSON-RPC connection keeps one handler per
// notification, so the handlers are registered here once and fanned out to
// the features.
import * as vscode from 'vscode';
import {
  LanguageClient, LanguageClientOptions, MessageType, PublishDiagnosticsNotification, PublishDiagnosticsParams, RequestType,
  RequestType0, ServerOptions, ShowMessageNotification, ShowMessageParams, State, WorkDoneProgress, WorkDoneProgressBegin,
  WorkDoneProgressCancelNotification, WorkDoneProgressEnd, WorkDoneProgressReport,
} from 'vscode-languageclient/node';
import * as proto from './protocol';
import { type HydraMessage, describeServerError, messageFor } from './format';
import { RaceStore } from './raceStore';
import { type ConfigProblem, configProblemInMessage, configProblemOfDiagnostics } from './configProblem';
import { evalSetProblem } from './evalModel';
import { showConfigProblem } from './configOpen';

export class HydraSession implements vscode.Disposable {
  readonly store = new RaceStore();
  readonly onAgentStarted = new vscode.EventEmitter<proto.AgentStartedParams>();
  readonly onAgentOutput = new vscode.EventEmitter<proto.AgentOutputParams>();
  readonly onAgentFinished = new vscode.EventEmitter<proto.AgentFinishedParams>();
  readonly onRaceFinished = new vscode.EventEmitter<proto.RaceFinishedParams>();
  /** A collaboration's iteration is done (scored and, unless it is the last, reviewed). */
  readonly onIterationFinished = new vscode.EventEmitter<proto.IterationFinishedParams>();
  /** A sample of an evaluation this session started finished. */
  readonly onEvalSample = new vscode.EventEmitter<proto.EvalSampleParams>();
  /** An evaluation this session started ended (completed or cancelled). */
  readonly onEvalFinished = new vscode.EventEmitter<proto.EvalFinishedParams>();
  /** hydra.toml's problems (textDocument/publishDiagnostics). */
  readonly onDiagnostics = new vscode.EventEmitter<PublishDiagnosticsParams>();
  /** A new hydra starts: what the last one published no longer holds. */
  readonly onStarting = new vscode.EventEmitter<void>();
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient | undefined> | undefined;
  // What hydra's window/showMessage said lately, numbered in order.
  private readonly recentMessages: HydraMessage[] = [];
  private messageCount = 0;
  // hydra.toml's error, as hydra last published it (textDocument/publishDiagnostics).
  private configError: ConfigProblem | undefined;

  constructor(private readonly log: vscode.OutputChannel) {}

  /** The running client, started on first use. Undefined when it cannot start. */
  async ensureStarted(): Promise<LanguageClient | undefined> {
    if (!vscode.workspace.isTrusted) return undefined;
    if (this.client?.state === State.Running) return this.client;
    this.starting ??= this.start().finally(() => (this.starting = undefined));
    return this.starting;
  }

  /**
   * Sends a hydra/* request. A server error becomes an error notification
   * carrying the server's message (see showError); the caller then gets undefined.
   */
  async request<P, R>(type: RequestType<P, R, void> | RequestType0<R, void>, params?: P): Promise<R | undefined> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('Hydra: this workspace is not trusted. hydra.toml runs commands, so Hydra works only in a trusted workspace.');
      return undefined;
    }
    const client = await this.ensureStarted();
    if (!client) return undefined;
    const since = this.messageCount;
    try {
      // A RequestType0 sends no params at all: hydra refuses params on methods that take none.
      if (type instanceof RequestType0) return await client.sendRequest(type);
      return await client.sendRequest(type, params as P);
    } catch (error) {
      this.showError(error, since);
      return undefined;
    }
  }

  /** The same request, with the error left to the caller. */
  async requestOrThrow<P, R>(type: RequestType<P, R, void>, params: P): Promise<R> {
    const client = await this.ensureStarted();
    if (!client) throw new Error('hydra is not running');
    return client.sendRequest(type, params);
  }

  /** How many window/showMessage hydra has sent: a request notes it before it goes, for showError. */
  get messagesSoFar(): number {
    return this.messageCount;
  }

  /**
   * Shows a request's error once. hydra shows some errors itself with
   * window/showMessage before it answers (a broken hydra.toml, a refused
   * merge), and a broken hydra.toml only once however many requests it
   * refuses: an error hydra said while the request ran is on screen already;
   * one it said earlier is shown again in hydra's own words, which VS Code
   * folds into the notification still open, if any, so there is never a
   * second one, nor silence once the first was closed. `since`:
   * messagesSoFar when the request was sent.
   */
  showError(error: unknown, since: number, actions: string[] = []): Thenable<string | undefined> {
    const said = messageFor(error, this.recentMessages);
    if (said && said.seq >= since && actions.length === 0) return Promise.resolve(undefined);
    if (said && actions.length === 0) return this.notify(said);
    const problem = evalSetProblem(error, proto.ErrorCodes.ConfigError);
    if (problem) return showConfigProblem(`Hydra: ${describeServerError(error)}`, problem, actions);
    return vscode.window.showErrorMessage(`Hydra: ${describeServerError(error)}`, ...actions);
  }

  /**
   * hydra.toml's error, when hydra has published one: hydra must be running
   * (it publishes at once when it starts), so this starts it.
   */
  async brokenConfig(): Promise<ConfigProblem | undefined> {
    if (!(await this.ensureStarted())) return undefined;
    return this.configError;
  }

  /** Listens to work-done progress on a token of ours; undefined when hydra is not running. */
  async onProgress(token: string, handler: (value: WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd) => void): Promise<vscode.Disposable | undefined> {
    const client = await this.ensureStarted();
    return client?.onProgress(WorkDoneProgress.type, token, handler);
  }

  /** Asks hydra to stop the work behind a progress token (the race, for hydra/race). */
  async cancelProgress(token: string): Promise<void> {
    const client = await this.ensureStarted();
    await client?.sendNotification(WorkDoneProgressCancelNotification.type, { token });
  }

  async restart(): Promise<void> {
    const old = this.client;
    this.client = undefined;
    if (old) await old.dispose().catch(() => undefined);
    await this.ensureStarted();
  }

  /** Stops hydra (shutdown, then exit: its races end with it, as docs/protocol.md says). */
  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.dispose().catch(() => undefined);
  }

  dispose(): void {
    void this.stop();
    for (const e of [this.onAgentStarted, this.onAgentOutput, this.onAgentFinished, this.onRaceFinished, this.onIterationFinished,
      this.onEvalSample, this.onEvalFinished, this.onDiagnostics, this.onStarting]) {
      e.dispose();
    }
  }

  /** Reloads the newest races from hydra into the store. */
  async refresh(): Promise<void> {
    const result = await this.request<proto.RacesParams, proto.RacesResult>(proto.races, { limit: 20 });
    if (result) this.store.setSummaries(result.races);
  }

  /** hydra's window/showMessage, as a notification of this extension. */
  private showMessage(p: ShowMessageParams): void {
    const said = { type: p.type, message: p.message, seq: this.messageCount++ };
    this.recentMessages.push(said);
    if (this.recentMessages.length > 20) this.recentMessages.shift();
    void this.notify(said);
  }

  private notify(said: HydraMessage): Thenable<string | undefined> {
    const text = `Hydra: ${said.message}`;
    const broken = said.type === MessageType.Error ? configProblemInMessage(said.message) : undefined;
    if (broken) return showConfigProblem(text, broken);
    if (said.type === MessageType.Error) return vscode.window.showErrorMessage(text);
    if (said.type === MessageType.Warning) return vscode.window.showWarningMessage(text);
    return vscode.window.showInformationMessage(text);
  }

  private async start(): Promise<LanguageClient | undefined> {
    const client = createClient(this.log);
    // Registered before start, so it replaces vscode-languageclient's own
    // handler: the session must know what hydra already showed.
    client.onNotification(ShowMessageNotification.type, (p) => this.showMessage(p));
    client.onNotification(proto.agentStarted, (p) => {
      this.store.agentStarted(p);
      this.onAgentStarted.fire(p);
    });
    client.onNotification(proto.agentOutput, (p) => this.onAgentOutput.fire(p));
    client.onNotification(proto.agentFinished, (p) => {
      this.store.agentFinished(p);
      this.onAgentFinished.fire(p);
    });
    client.onNotification(proto.scoringStarted, (p) => this.store.scoringStarted(p.raceId, p.iteration));
    client.onNotification(proto.iterationFinished, (p) => {
      this.store.iterationFinished(p);
      this.onIterationFinished.fire(p);
    });
    client.onNotification(proto.raceFinished, (p) => {
      this.store.raceFinished(p);
      this.onRaceFinished.fire(p);
    });
    client.onNotification(proto.evalSample, (p) => this.onEvalSample.fire(p));
    client.onNotification(proto.evalFinished, (p) => this.onEvalFinished.fire(p));
    // Replaces vscode-languageclient's handler too: the diagnostics feature owns the collection.
    client.onNotification(PublishDiagnosticsNotification.type, (p) => {
      const uri = vscode.Uri.parse(p.uri);
      if (uri.path.endsWith('/hydra.toml')) this.configError = configProblemOfDiagnostics(uri.fsPath, p.diagnostics);
      this.onDiagnostics.fire(p);
    });
    this.configError = undefined;
    this.onStarting.fire();
    try {
      await client.start();
    } catch (error) {
      const path = vscode.workspace.getConfiguration('hydra').get<string>('serverPath', 'hydra');
      void vscode.window.showErrorMessage(`Hydra: could not start '${path} serve': ${describeServerError(error)}. Set hydra.serverPath.`);
      await client.dispose().catch(() => undefined);
      return undefined;
    }
    this.client = client;
    void this.refresh();
    return client;
  }
}

function createClient(log: vscode.OutputChannel): LanguageClient {
  const config = vscode.workspace.getConfiguration('hydra');
  const folder = vscode.workspace.workspaceFolders?.[0];
  const serverOptions: ServerOptions = {
    command: config.get<string>('serverPath', 'hydra') || 'hydra',
    args: ['serve', '--log-level', config.get<string>('logLevel', 'info')],
    options: folder ? { cwd: folder.uri.fsPath } : undefined,
  };
  const clientOptions: LanguageClientOptions = {
    // hydra serves no language features: no document is synchronised.
    documentSelector: [],
    outputChannel: log,
    workspaceFolder: folder,
  };
  // The id 'hydra' makes vscode-languageclient read the hydra.trace.server setting.
  return new LanguageClient('hydra', 'Hydra', serverOptions, clientOptions);
}
