#!/usr/bin/env node
// Runs the CLI from its bundle (dist/eks-consolidator.mjs, built by `npm ci` and before the tests), or
// from the TypeScript source through the tsx loader when the bundle is missing or older than any file
// under src/ (a checkout being edited), so what runs is always the source as it is.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bundle = join(root, 'dist', 'eks-consolidator.mjs');

function newestUnder(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}

const src = join(root, 'src');
if (existsSync(bundle) && (!existsSync(src) || statSync(bundle).mtimeMs >= newestUnder(src))) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/run.ts');
}
