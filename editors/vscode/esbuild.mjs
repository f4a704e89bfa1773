// Bundles the extension into dist/extension.js (with vscode-languageclient
// inside, so the .vsix needs no node_modules), or, with --tests, the unit
// tests into out/test/unit/ for node --test.
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const tests = process.argv.includes('--tests');
const production = process.argv.includes('--production');

const common = {
  bundle: true,
  platform: 'node',
  target: 'node18',
  format: 'cjs',
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
  absWorkingDir: here,
};

if (tests) {
  const dir = path.join(here, 'test/unit');
  const entryPoints = fs.readdirSync(dir).filter((f) => f.endsWith('.test.ts')).map((f) => path.join(dir, f));
  // The unit tests cover the parts without VS Code: importing it is an error.
  await esbuild.build({ ...common, entryPoints, outdir: path.join(here, 'out/test/unit'), external: [] });
} else {
  await esbuild.build({
    ...common,
    entryPoints: [path.join(here, 'src/extension.ts')],
    outfile: path.join(here, 'dist/extension.js'),
    external: ['vscode'],
  });
}
