#!/usr/bin/env node
// Runs the TypeScript CLI through the tsx loader, so a checkout works right after `npm ci` with no build.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const { readAll } = await import('../src/cli/stdin.ts');
const code = await main(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  clock: () => Date.now(),
  env: process.env,
  readStdin: () => readAll(process.stdin),
  isTTY: process.stdout.isTTY === true,
  columns: process.stdout.columns,
});
process.exitCode = code;
