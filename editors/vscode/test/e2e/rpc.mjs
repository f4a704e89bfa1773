// A second, independent client of `hydra serve` for the end-to-end test: it
// asks hydra directly what the extension should be showing (hydra/scores).
// Content-Length framing over the child's stdin and stdout.
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';

export class HydraRpc {
  constructor(hydra, root) {
    this.child = spawn(hydra, ['serve', '--log-level', 'warn'], { cwd: root, stdio: ['pipe', 'pipe', 'ignore'] });
    this.root = root;
    this.buffer = Buffer.alloc(0);
    this.nextId = 1;
    this.pending = new Map();
    this.notifications = [];
    this.child.stdout.on('data', (chunk) => this.read(chunk));
  }

  async initialize() {
    await this.request('initialize', { processId: process.pid, rootUri: pathToFileURL(this.root).href, capabilities: {} });
    this.notify('initialized', {});
  }

  request(method, params) {
    const id = this.nextId++;
    this.send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject, method }));
  }

  notify(method, params) {
    this.send(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  async close() {
    await this.request('shutdown').catch(() => undefined);
    this.notify('exit');
    await new Promise((resolve) => (this.child.exitCode !== null ? resolve() : this.child.once('exit', resolve)));
  }

  send(message) {
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    this.child.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
    this.child.stdin.write(body);
  }

  read(chunk) {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length:\s*(\d+)/i.exec(this.buffer.subarray(0, end).toString())?.[1]);
      if (this.buffer.length < end + 4 + length) return;
      const message = JSON.parse(this.buffer.subarray(end + 4, end + 4 + length).toString('utf8'));
      this.buffer = this.buffer.subarray(end + 4 + length);
      this.dispatch(message);
    }
  }

  dispatch(message) {
    if (message.id !== undefined && this.pending.has(message.id) && !message.method) {
      const { resolve, reject, method } = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) reject(Object.assign(new Error(`${method}: ${message.error.message}`), { error: message.error }));
      else resolve(message.result);
    } else if (message.method && message.id === undefined) {
      this.notifications.push(message);
    } else if (message.method) {
      // A request from the server (workDoneProgress/create): refuse nothing.
      this.send({ jsonrpc: '2.0', id: message.id, result: null });
    }
  }
}
