// A throwaway git repository for the end-to-end test: the fixture project,
// a hydra.toml with scripted agents (fixer, breaker, polisher, and crasher,
// which fails) that think for `agentDelaySeconds` before they edit, narrator
// (a stand-in for the claude CLI, read by hydra's claude adapter), real
// scoring commands (the build, build.sh, prints its errors as compilers do,
// so hydra reads them as findings), and one commit on branch main. `extraAgents` adds agents of the
// same script ({name, mode, delaySeconds, binary}: binary defaults to the
// script); `autoMerge` turns [scoring] auto_merge on. `collab` ({delaySeconds})
// adds a builder, mason, and a reviewer, critic (fixtures/collab-agent.sh;
// dawdler builds as mason does, after a minute: a collaboration to cancel),
// named as the defaults in [collaboration], which refines until the reviewer
// approves (at most 3 iterations; until_score 100, never reached by them).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const fixtures = path.join(here, 'fixtures');
/** The hydra repository this extension lives in (editors/vscode/test/e2e/ is under it). */
export const hydraRoot = path.resolve(here, '../../../..');

export function git(dir, ...args) {
  return execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).trim();
}

export function makeRepo(dir, { agentDelaySeconds = 0, extraAgents = [], autoMerge = false, collab } = {}) {
  fs.mkdirSync(dir, { recursive: true });
  fs.cpSync(path.join(fixtures, 'project'), dir, { recursive: true });
  const agent = path.join(fixtures, 'agent.sh');
  fs.writeFileSync(path.join(dir, 'hydra.toml'), [
    '[general]',
    'max_concurrent_agents = 4',
    'timeout_seconds = 60',
    '',
    '[agents.fixer]',
    'adapter = "command"',
    `binary = "${agent}"`,
    'args = ["fix"]',
    `env = { AGENT_DELAY = "${agentDelaySeconds}" }`,
    '',
    '[agents.breaker]',
    'adapter = "command"',
    `binary = "${agent}"`,
    'args = ["break"]',
    `env = { AGENT_DELAY = "${agentDelaySeconds}" }`,
    '',
    '[agents.polisher]',
    'adapter = "command"',
    `binary = "${agent}"`,
    'args = ["polish"]',
    '',
    '[agents.crasher]',
    'adapter = "command"',
    `binary = "${agent}"`,
    'args = ["crash"]',
    '',
    '[agents.narrator]',
    'adapter = "claude"',
    `binary = "${path.join(fixtures, 'narrator.sh')}"`,
    '',
    ...extraAgents.flatMap((a) => [
      `[agents.${a.name}]`,
      'adapter = "command"',
      `binary = "${a.binary ?? agent}"`,
      `args = ["${a.mode}"]`,
      `env = { AGENT_DELAY = "${a.delaySeconds ?? agentDelaySeconds}" }`,
      '',
    ]),
    ...(collab ? [['mason', 'build', collab.delaySeconds ?? 0], ['critic', 'review', collab.delaySeconds ?? 0], ['dawdler', 'build', 60]]
      .flatMap(([name, mode, delay]) => [
        `[agents.${name}]`,
        'adapter = "command"',
        `binary = "${path.join(fixtures, 'collab-agent.sh')}"`,
        `args = ["${mode}"]`,
        `env = { AGENT_DELAY = "${delay}" }`,
        '',
      ]) : []),
    '[scoring]',
    ...(autoMerge ? ['auto_merge = true'] : []),
    'build_command = "sh build.sh"',
    'test_command = "sh run-tests.sh"',
    'test_format = "pytest"',
    'timeout_per_check_seconds = 30',
    '',
    ...(collab ? [
      '[collaboration]',
      'builder = "mason"',
      'reviewer = "critic"',
      'max_iterations = 3',
      'until_score = 100',
      '',
    ] : []),
  ].join('\n'));
  fs.writeFileSync(path.join(dir, '.gitignore'), '.hydra/\n.hydra-workspaces/\n');
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  git(dir, 'config', 'user.name', 'E2E Runner');
  git(dir, 'config', 'user.email', 'e2e@example.invalid');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'calc: before the race');
  return fs.realpathSync(dir);
}

/**
 * The demo project, as scripts/demo.sh makes it (without building hydra or
 * racing): examples/demo/project of this repository, committed. Its scripted
 * agents careful, alternating, breaker and sprawler serve the eval set
 * examples/eval/shopcart.toml.
 */
export function makeDemoRepo(dir) {
  fs.mkdirSync(dir, { recursive: true });
  fs.cpSync(path.join(hydraRoot, 'examples/demo/project'), dir, { recursive: true });
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=hydra demo', '-c', 'user.email=demo@hydra.invalid', 'commit', '-q', '-m', 'shopcart: a small cart library');
  return fs.realpathSync(dir);
}
