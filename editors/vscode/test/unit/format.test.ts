import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  describeDryRun, describeServerError, escapeHtml, formatElapsed, outputText, scoreBand,
} from '../../src/format';

test('scoreBand is green above 80, yellow from 50 to 80, red below 50', () => {
  assert.equal(scoreBand(100), 'good');
  assert.equal(scoreBand(80.1), 'good');
  assert.equal(scoreBand(80), 'fair');
  assert.equal(scoreBand(50), 'fair');
  assert.equal(scoreBand(49.9), 'poor');
  assert.equal(scoreBand(0), 'poor');
  assert.equal(scoreBand(null), 'none');
});

test('formatElapsed picks the unit by size', () => {
  assert.equal(formatElapsed(850), '850ms');
  assert.equal(formatElapsed(4200), '4.2s');
  assert.equal(formatElapsed(65_000), '1m 05s');
  assert.equal(formatElapsed(3_720_000), '1h 02m');
});

test('describeServerError keeps the server message and names what data lists', () => {
  assert.equal(
    describeServerError({ code: -32012, message: "no agent named 'gpt'", data: { agent: 'gpt', known: ['fixer', 'claude'] } }),
    "no agent named 'gpt' (known agents: fixer, claude)");
  assert.equal(
    describeServerError({ code: -32014, message: 'merge refused: uncommitted changes', data: { reason: 'dirty', files: ['a.txt'] } }),
    'merge refused: uncommitted changes (files: a.txt)');
  assert.equal(
    describeServerError({ code: -32019, message: 'hydra.toml is broken', data: { file: 'hydra.toml', line: 3, column: 7 } }),
    'hydra.toml is broken (hydra.toml:3:7)');
  assert.equal(
    describeServerError({ code: -32019, message: 'hydra.toml is broken: /r/hydra.toml:2:25: expected value', data: { file: '/r/hydra.toml', line: 2, column: 25 } }),
    'hydra.toml is broken: /r/hydra.toml:2:25: expected value');
  assert.equal(describeServerError({ code: -32010, message: 'no such race', data: { raceId: 'x' } }), 'no such race');
  assert.equal(describeServerError(new Error('pipe closed')), 'pipe closed');
});

test('describeDryRun says what the merge would do', () => {
  const base = { agentId: 'fixer', branch: 'hydra/fixer-1', targetBranch: 'main', dryRun: true, conflicts: [], cleanedUp: false };
  assert.equal(describeDryRun({ ...base, outcome: 'fastForward', files: ['lib.sh', 'CHANGELOG.md'] }),
    'Fast-forward main to hydra/fixer-1 (2 files: lib.sh, CHANGELOG.md).');
  assert.equal(describeDryRun({ ...base, outcome: 'conflict', files: [], conflicts: ['lib.sh'] }),
    'Merging hydra/fixer-1 into main conflicts in lib.sh.');
  assert.match(describeDryRun({ ...base, outcome: 'upToDate', files: [] }), /already contains/);
});

test('outputText writes one line per line, marks stderr and counts dropped lines', () => {
  assert.equal(outputText({ raceId: 'r', agentId: 'a', stream: 'stdout', lines: ['one', 'two'], events: [] }), 'one\ntwo\n');
  assert.equal(outputText({ raceId: 'r', agentId: 'a', stream: 'stderr', lines: ['oops'], events: [] }), '[stderr] oops\n');
  assert.match(outputText({ raceId: 'r', agentId: 'a', stream: 'stdout', lines: [], events: [], droppedLines: 12 }),
    /12 line\(s\) left out/);
});

test('escapeHtml leaves no markup through', () => {
  assert.equal(escapeHtml(`<img src=x onerror="a('b')">&`), '&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;');
});
