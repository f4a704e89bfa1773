// Records test/unit/fixtures/collab.json from a real collaboration (the
// end-to-end test's scripted mason and critic): hydra/collab's answer, every
// notification of it in order, and its summary in hydra/status afterwards.
// The unit tests replay it through the race store. Usage:
//   node record-collab-fixture.mjs <hydra>
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeRepo } from './repo.mjs';
import { HydraRpc } from './rpc.mjs';

const hydra = process.argv[2];
const root = makeRepo(fs.mkdtempSync(path.join(os.tmpdir(), 'hydra-fixture-')), { collab: {} });
const rpc = new HydraRpc(hydra, root);
await rpc.initialize();
const started = await rpc.request('hydra/collab', { task: 'Handle the empty cart', builder: 'mason', reviewer: 'critic' });
const deadline = Date.now() + 120_000;
while (!rpc.notifications.some((n) => n.method === 'hydra/raceFinished' && n.params.raceId === started.raceId)) {
  if (Date.now() > deadline) throw new Error('the collaboration did not finish');
  await new Promise((r) => setTimeout(r, 100));
}
const { races: [summary] } = await rpc.request('hydra/status', { raceId: started.raceId });
await rpc.close();
// What the store reads; agentOutput's lines are left out (they name this machine's paths).
const notifications = rpc.notifications
  .filter((n) => n.params?.raceId === started.raceId && n.method !== 'hydra/agentOutput')
  .map((n) => ({ method: n.method, params: n.params }));
const out = path.join(path.dirname(new URL(import.meta.url).pathname), '../unit/fixtures/collab.json');
fs.writeFileSync(out, JSON.stringify({ started, notifications, summary }, null, 2) + '\n');
fs.rmSync(root, { recursive: true, force: true });
console.log(`wrote ${out}: ${notifications.map((n) => n.method.replace('hydra/', '')).join(', ')}`);
