// Records test/unit/fixtures/scores.json from a real race: the scoreboard's
// unit tests render what hydra really answers. Usage: node record-fixture.mjs <hydra>
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeRepo } from './repo.mjs';
import { HydraRpc } from './rpc.mjs';

const hydra = process.argv[2];
const root = makeRepo(fs.mkdtempSync(path.join(os.tmpdir(), 'hydra-fixture-')));
const rpc = new HydraRpc(hydra, root);
await rpc.initialize();
const { raceId } = await rpc.request('hydra/race', { task: 'Make add() add', agents: ['fixer', 'breaker'] });
const deadline = Date.now() + 60_000;
while (!rpc.notifications.some((n) => n.method === 'hydra/raceFinished')) {
  if (Date.now() > deadline) throw new Error('the race did not finish');
  await new Promise((r) => setTimeout(r, 100));
}
const scores = await rpc.request('hydra/scores', { raceId });
await rpc.close();
const out = path.join(path.dirname(new URL(import.meta.url).pathname), '../unit/fixtures/scores.json');
fs.writeFileSync(out, JSON.stringify(scores, null, 2) + '\n');
fs.rmSync(root, { recursive: true, force: true });
console.log(`wrote ${out}: ${scores.rankings.map((r) => `${r.agentId} ${r.total}`).join(', ')}`);
