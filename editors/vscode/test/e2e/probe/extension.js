// The end-to-end test's window into VS Code's extension API, which a browser
// driving the workbench cannot reach: what vscode.languages.getDiagnostics()
// and the active tab say (a text tab's language and text too), and the names
// of the open terminals, written as JSON to the file $HYDRA_E2E_PROBE names
// whenever they change (and every half second). It only reads.
const fs = require('fs');
const vscode = require('vscode');

function tabState() {
  const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
  if (!tab) return undefined;
  const text = (uri) => vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString())?.getText();
  const input = tab.input;
  if (input instanceof vscode.TabInputTextDiff) {
    return {
      kind: 'diff', label: tab.label,
      original: input.original.toString(), modified: input.modified.toString(),
      originalText: text(input.original), modifiedText: text(input.modified),
    };
  }
  if (input instanceof vscode.TabInputText) {
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === input.uri.toString());
    return { kind: 'text', label: tab.label, uri: input.uri.toString(), languageId: doc?.languageId, text: doc?.getText() };
  }
  return { kind: 'other', label: tab.label };
}

function snapshot() {
  const diagnostics = {};
  for (const [uri, list] of vscode.languages.getDiagnostics()) {
    if (list.length === 0) continue;
    diagnostics[uri.fsPath] = vscode.languages.getDiagnostics(uri).map((d) => ({
      line: d.range.start.line, character: d.range.start.character, endLine: d.range.end.line, endCharacter: d.range.end.character,
      severity: d.severity, source: d.source, message: d.message,
    }));
  }
  return { time: Date.now(), diagnostics, activeTab: tabState(), terminals: vscode.window.terminals.map((t) => t.name) };
}

function activate(context) {
  const file = process.env.HYDRA_E2E_PROBE;
  if (!file) return;
  const write = () => {
    try {
      fs.writeFileSync(`${file}.tmp`, JSON.stringify(snapshot()));
      fs.renameSync(`${file}.tmp`, file);
    } catch {
      // The next change writes again.
    }
  };
  const timer = setInterval(write, 500);
  context.subscriptions.push(
    { dispose: () => clearInterval(timer) },
    vscode.languages.onDidChangeDiagnostics(write),
    vscode.window.tabGroups.onDidChangeTabs(write),
    vscode.window.onDidChangeActiveTextEditor(write),
    vscode.workspace.onDidOpenTextDocument(write),
    vscode.window.onDidOpenTerminal(write),
    vscode.window.onDidCloseTerminal(write),
  );
  write();
}

module.exports = { activate, deactivate() {} };
