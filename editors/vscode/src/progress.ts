// The progress of a race, a collaboration or an evaluation as a notification
// with a Cancel button. Each is started with a work-done token of ours, so
// hydra reports on it ($/progress begin/report/end) instead of on a token of
// its own, which vscode-languageclient would show only in the status bar,
// without cancel; Cancel sends window/workDoneProgress/cancel on it, which
// hydra takes as cancelling the work.
import * as vscode from 'vscode';
import { randomUUID } from 'crypto';
import type { HydraSession } from './session';

export interface WorkProgress {
  token: string;
  /** The work did not start: stop listening. */
  abandon(): void;
}

/** A fresh token for a request of `kind` ("race" for hydra/race and hydra/collab, "eval" for hydra/evalRun), followed. */
export async function trackProgress(session: HydraSession, kind: 'race' | 'eval' = 'race'): Promise<WorkProgress> {
  const token = `hydra-${kind}-${randomUUID()}`;
  let finish: (() => void) | undefined;
  let report: vscode.Progress<{ message?: string; increment?: number }> | undefined;
  let shown = 0;
  let listener: vscode.Disposable | undefined;
  const close = () => {
    listener?.dispose();
    finish?.();
  };
  listener = await session.onProgress(token, (value) => {
    if (value.kind === 'begin') {
      void vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: value.title, cancellable: value.cancellable ?? true },
        (progress, cancelled) => new Promise<void>((resolve) => {
          report = progress;
          finish = resolve;
          progress.report({ message: value.message });
          cancelled.onCancellationRequested(() => void session.cancelProgress(token));
        }),
      );
    } else if (value.kind === 'report') {
      const percentage = value.percentage ?? shown;
      report?.report({ message: value.message, increment: Math.max(0, percentage - shown) });
      shown = Math.max(shown, percentage);
    } else {
      close();
    }
  });
  return { token, abandon: close };
}
