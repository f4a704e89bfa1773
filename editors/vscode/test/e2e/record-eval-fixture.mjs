// Records test/unit/fixtures/evalReport.json from a real evaluation: the eval
// report view's unit tests render what hydra really answers. The demo
// project's eval set (examples/eval/shopcart.toml) with careful and
// alternating, two samples each. Usage: node record-eval-fixture.mjs <hydra>
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hydraRoot, makeDemoRepo } from './repo.mjs';
import { HydraRpc } from './rpc.mjs';

const hydra = process.argv[2];
const root = makeDemoRepo(fs.mkdtempSync(path.join(os.tmpdir(), 'hydra-fixture-')));
const rpc = new HydraRpc(hydra, root);
await rpc.initialize();
const { evalId } = await rpc.request('hydra/evalRun', {
  set: path.join(hydraRoot, 'examples/eval/shopcart.toml'), agents: ['careful', 'alternating'], samples: 2,
});
const deadline = Date.now() + 120_000;
while (!rpc.notifications.some((n) => n.method === 'hydra/evalFinished')) {
  if (Date.now() > deadline) throw new Error('the evaluation did not finish');
  await new Promise((r) => setTimeout(r, 100));
}
const answer = await rpc.request('hydra/evalReport', { evalId });
await rpc.close();
const out = path.join(path.dirname(new URL(import.meta.url).pathname), '../unit/fixtures/evalReport.json');
fs.writeFileSync(out, JSON.stringify(answer, null, 2) + '\n');
fs.rmSync(root, { recursive: true, force: true });
console.log(`wrote ${out}: ${answer.report.agents.map((a) => `${a.agent} pass@1 ${a.passAtK['1']}`).join(', ')}`);
