#!/usr/bin/env node
// Starts the CLI.
//
// - Installed (from `npm pack`'s tarball, or anywhere without the TypeScript source): runs the bundle,
//   dist/eks-consolidator.mjs, which `npm pack` builds (prepack).
// - In a checkout (src/cli/run.ts is there): runs the bundle too, which `npm ci` builds (prepare) and
//   the tests rebuild, unless it is missing or older than a file under src/ (the source is being
//   edited); then it runs the source through the tsx loader, a development dependency, so what runs is
//   always the source as it is.
//
// `--version` is answered here, before anything else is loaded: it needs only package.json.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bundle = join(root, 'dist', 'eks-consolidator.mjs');
const source = join(root, 'src', 'cli', 'run.ts');

function newestUnder(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}

const first = process.argv[2];
if (first === '--version' || first === '-V' || first === 'version') {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  process.stdout.write(`eks-consolidator ${typeof version === 'string' ? version : 'unknown'}\n`);
} else if (!existsSync(source)) {
  if (!existsSync(bundle)) {
    process.stderr.write(`eks-consolidator: ${bundle} is missing; this copy is incomplete: reinstall it from a tarball made by \`npm pack\`\n`);
    process.exitCode = 1;
  } else {
    await import(pathToFileURL(bundle).href);
  }
} else if (existsSync(bundle) && statSync(bundle).mtimeMs >= newestUnder(join(root, 'src'))) {
  await import(pathToFileURL(bundle).href);
} else {
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    const why = existsSync(bundle) ? `${bundle} is older than the source in src/` : `${bundle} is missing`;
    process.stderr.write(
      `eks-consolidator: ${why}, and tsx (a development dependency, needed to run the source) is not installed.\n` +
        `Build the CLI in ${root}: \`npm run prepare\` (it needs the development dependencies; \`npm ci\` installs them and builds it).\n`,
    );
    process.exitCode = 1;
  }
  if (register) {
    register();
    await import(pathToFileURL(source).href);
  }
}
