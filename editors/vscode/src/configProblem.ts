// hydra.toml's problems, as hydra tells them: a request's ConfigError (its
// data names file, line and column), its window/showMessage ("hydra.toml is
// broken: FILE:LINE:COLUMN: problem ..."), and its diagnostics. Each one can
// open the file at its place; a diagnostic hydra puts on one character is
// widened to the key or value there. No VS Code imports: the unit tests run
// it under plain Node.
// A ConfigError's data reads as an EvalSetError's: evalSetProblem(error, ErrorCodes.ConfigError).
import type { EvalSetProblem } from './evalModel';

/** Where hydra.toml is broken: 1-based line and column, 0 when hydra does not know. */
export type ConfigProblem = EvalSetProblem;

const BROKEN = /^hydra\.toml is broken: (.+?):(\d+)(?::(\d+))?: ([\s\S]*)$/;

/** The place hydra's window/showMessage for a broken hydra.toml names; undefined for any other message. */
export function configProblemInMessage(text: string): ConfigProblem | undefined {
  const m = BROKEN.exec(text);
  if (!m) return undefined;
  return { file: m[1], line: Number(m[2]), column: m[3] ? Number(m[3]) : 0, message: m[4] };
}

/** The first error hydra published for hydra.toml (0-based range start), as a problem with 1-based places. */
export function configProblemOfDiagnostics(
  file: string, diagnostics: Array<{ range: { start: { line: number; character: number } }; severity?: number; message: string }>,
): ConfigProblem | undefined {
  const error = diagnostics.find((d) => (d.severity ?? 1) === 1);
  if (!error) return undefined;
  return { file, line: error.range.start.line + 1, column: error.range.start.character + 1, message: error.message };
}

const KEY = /[A-Za-z0-9_.+:-]/;

/**
 * The key or value at `character` of a hydra.toml line, as [start, end)
 * columns: a table header ("[agents.claude]") whole, a quoted string with
 * its quotes, a bare key or value (dotted keys whole); from a blank, the
 * token after it. When there is none, the one character (or none past the
 * end of the line).
 */
export function tokenAt(line: string, character: number): [number, number] {
  let at = Math.max(0, character);
  while (at < line.length && (line[at] === ' ' || line[at] === '\t')) at++;
  if (at >= line.length) return [character, Math.min(character + 1, Math.max(character, line.length))];
  const c = line[at];
  if (c === '[') {
    const close = line.indexOf(']', at);
    const end = close < 0 ? line.length : line[close + 1] === ']' ? close + 2 : close + 1;
    return [at, end];
  }
  if (c === '"' || c === "'") {
    let end = at + 1;
    while (end < line.length && line[end] !== c) end += line[end] === '\\' && c === '"' ? 2 : 1;
    return [at, Math.min(end + 1, line.length)];
  }
  if (!KEY.test(c)) return [at, at + 1];
  let start = at;
  while (start > 0 && KEY.test(line[start - 1])) start--;
  let end = at;
  while (end < line.length && KEY.test(line[end])) end++;
  return [start, end];
}

/**
 * A diagnostic's range on hydra.toml, widened to the whole key or value
 * when hydra put it on one character (or none) of one line; a wider range
 * stays as hydra gave it. 0-based, as LSP ranges.
 */
export function widenedRange(
  lines: string[], range: { start: { line: number; character: number }; end: { line: number; character: number } },
): { start: { line: number; character: number }; end: { line: number; character: number } } {
  const { start, end } = range;
  if (start.line !== end.line || end.character - start.character > 1) return range;
  const text = lines[start.line];
  if (text === undefined) return range;
  const [from, to] = tokenAt(text, start.character);
  if (to <= from) return range;
  return { start: { line: start.line, character: from }, end: { line: start.line, character: to } };
}

/** What a broken hydra.toml's notification says: "hydra.toml is broken: /r/hydra.toml:2:1: unknown key ...". */
export function brokenConfigText(problem: ConfigProblem): string {
  const place = `${problem.file}${problem.line > 0 ? `:${problem.line}` : ''}${problem.line > 0 && problem.column > 0 ? `:${problem.column}` : ''}`;
  return `hydra.toml is broken: ${place}: ${problem.message}`;
}
