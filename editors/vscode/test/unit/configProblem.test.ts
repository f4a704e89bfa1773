import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  brokenConfigText, configProblemInMessage, configProblemOfDiagnostics, tokenAt, widenedRange,
} from '../../src/configProblem';
import { evalSetProblem } from '../../src/evalModel';

const CONFIG_ERROR = -32019;

test('a ConfigError names the place to open; any other error does not', () => {
  assert.deepEqual(evalSetProblem({ code: -32019, message: 'hydra.toml is broken', data: { file: '/r/hydra.toml', line: 3, column: 7, message: 'bad' } }, CONFIG_ERROR),
    { file: '/r/hydra.toml', line: 3, column: 7, message: 'bad' });
  assert.equal(evalSetProblem({ code: -32012, message: 'no agent', data: { file: '/r/hydra.toml', line: 3 } }, CONFIG_ERROR), undefined);
  assert.equal(evalSetProblem(new Error('x'), CONFIG_ERROR), undefined);
});

test('hydra\'s message for a broken hydra.toml names the place; any other message does not', () => {
  assert.deepEqual(configProblemInMessage(
    "hydra.toml is broken: /r/hydra.toml:2:1: unknown key 'max_concurent_agents' in [general] (races cannot start until it is fixed)"),
  { file: '/r/hydra.toml', line: 2, column: 1, message: "unknown key 'max_concurent_agents' in [general] (races cannot start until it is fixed)" });
  assert.deepEqual(configProblemInMessage('hydra.toml is broken: hydra.toml:9: no column'),
    { file: 'hydra.toml', line: 9, column: 0, message: 'no column' });
  assert.equal(configProblemInMessage('merge refused: uncommitted changes'), undefined);
});

test('the first error hydra published is the problem, with 1-based places; warnings alone are none', () => {
  const at = (line: number, character: number) => ({ start: { line, character }, end: { line, character: character + 1 } });
  assert.deepEqual(configProblemOfDiagnostics('/r/hydra.toml', [
    { range: at(4, 0), severity: 2, message: 'tests compared by counts only' },
    { range: at(1, 2), severity: 1, message: 'unknown key' },
  ]), { file: '/r/hydra.toml', line: 2, column: 3, message: 'unknown key' });
  assert.equal(configProblemOfDiagnostics('/r/hydra.toml', [{ range: at(4, 0), severity: 2, message: 'w' }]), undefined);
  assert.equal(configProblemOfDiagnostics('/r/hydra.toml', []), undefined);
});

test('tokenAt covers the key, the quoted value or the table header at a column', () => {
  assert.deepEqual(tokenAt('max_concurent_agents = 4', 0), [0, 20]);
  assert.deepEqual(tokenAt('max_concurent_agents = 4', 5), [0, 20]);
  assert.deepEqual(tokenAt('  test_command = "npx jest"', 0), [2, 14]);
  assert.deepEqual(tokenAt('  test_command = "npx jest"', 17), [17, 27]);
  assert.deepEqual(tokenAt('adapter = "cl\\"aude" # x', 10), [10, 20]);
  assert.deepEqual(tokenAt("model = 'x'", 8), [8, 11]);
  assert.deepEqual(tokenAt('[agents.claude]', 0), [0, 15]);
  assert.deepEqual(tokenAt('[[eval.cases]]', 0), [0, 14]);
  assert.deepEqual(tokenAt('scoring.weights.tests = 3', 0), [0, 21]);
  assert.deepEqual(tokenAt('x = 1', 2), [2, 3], 'an = is a character of its own');
  assert.deepEqual(tokenAt('', 0), [0, 0]);
  assert.deepEqual(tokenAt('abc', 7), [7, 7]);
});

test('a one-character diagnostic is widened to the key; a wider or multi-line one stays as hydra gave it', () => {
  const lines = ['[general]', 'max_concurent_agents = 4'];
  const one = { start: { line: 1, character: 0 }, end: { line: 1, character: 1 } };
  assert.deepEqual(widenedRange(lines, one), { start: { line: 1, character: 0 }, end: { line: 1, character: 20 } });
  const empty = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
  assert.deepEqual(widenedRange(lines, empty), { start: { line: 0, character: 0 }, end: { line: 0, character: 9 } });
  const wide = { start: { line: 1, character: 0 }, end: { line: 1, character: 5 } };
  assert.deepEqual(widenedRange(lines, wide), wide);
  const multi = { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } };
  assert.deepEqual(widenedRange(lines, multi), multi);
  const beyond = { start: { line: 9, character: 0 }, end: { line: 9, character: 1 } };
  assert.deepEqual(widenedRange(lines, beyond), beyond, 'a line the file no longer has');
});

test('a broken hydra.toml is said with its place, as hydra\'s own message says it, and read back to the same place', () => {
  const problem = { file: '/r/hydra.toml', line: 2, column: 1, message: "unknown key 'x' (races cannot start until it is fixed)" };
  const text = brokenConfigText(problem);
  assert.equal(text, "hydra.toml is broken: /r/hydra.toml:2:1: unknown key 'x' (races cannot start until it is fixed)");
  assert.deepEqual(configProblemInMessage(text), problem);
  assert.equal(brokenConfigText({ ...problem, line: 0, column: 0 }), "hydra.toml is broken: /r/hydra.toml: unknown key 'x' (races cannot start until it is fixed)");
  assert.equal(brokenConfigText({ ...problem, column: 0 }), "hydra.toml is broken: /r/hydra.toml:2: unknown key 'x' (races cannot start until it is fixed)");
});
