// Builds the CLI into ES modules under dist/: the entry dist/eks-consolidator.mjs and, in dist/chunks/,
// the modules it imports only on demand (dependencies stay in node_modules, but for the few below), so that starting it
// neither compiles TypeScript nor loads what a run does not use: the DynamoDB client costs about half a
// second to import and only `--state dynamodb://...` needs it.
//
// Run by `npm ci` / `npm install` (prepare), by `npm pack` (prepack, with --clean: files of earlier
// builds are removed, so the tarball holds only this build's chunks) and before the tests (test/globalSetup.ts). bin/eks-consolidator.mjs, in
// a checkout, falls back to the source through tsx when the entry is missing or older than src/.
//
//   node scripts/build-cli.mjs [--clean]
import { build } from 'esbuild';
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
export const ENTRY = join(dist, 'eks-consolidator.mjs');

// Dependencies every `plan` loads (the NodePools are YAML; a budget's schedule is a cron expression,
// and cron-parser uses luxon) are bundled in: loaded from node_modules, each is dozens of CommonJS
// files to find and wrap one by one, a tenth of the demo plan's time. Every other dependency stays
// in node_modules (the AWS and Kubernetes clients are loaded only by the runs that use them).
const BUNDLED = new Set(['yaml', 'cron-parser', 'luxon']);
const packageName = (path) => path.split('/').slice(0, path.startsWith('@') ? 2 : 1).join('/');
const externalExceptBundled = {
  name: 'external-except-bundled',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.kind === 'entry-point' || args.path.startsWith('node:') || BUNDLED.has(packageName(args.path)) ? undefined : { path: args.path, external: true },
    );
  },
};

/**
 * Builds into memory, then writes each file under a temporary name and renames it into place, the
 * entry last: a CLI started while a build runs (tests run side by side, each building first) reads
 * either the old entry or the new one whole, and every chunk the entry names is already there. Chunk
 * names carry a hash of their contents, so builds of the same source write the same files.
 */
export async function buildCli({ clean = false } = {}) {
  const result = await build({
    absWorkingDir: root,
    entryPoints: { 'eks-consolidator': 'src/cli/run.ts' },
    outdir: 'dist',
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    splitting: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    plugins: [externalExceptBundled],
    // The bundled CommonJS packages require Node's built-in modules ('process'), which needs `require`.
    banner: { js: "import { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);" },
    logLevel: 'warning',
    write: false,
  });
  const files = [...result.outputFiles].sort((a, b) => Number(a.path === ENTRY) - Number(b.path === ENTRY));
  for (const file of files) {
    mkdirSync(dirname(file.path), { recursive: true });
    const temporary = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temporary, file.contents);
    renameSync(temporary, file.path);
  }
  // Earlier builds' files go only once this build is in place, so a CLI started from this build finds
  // all of its files. Another build's temporary files are left alone: it is still writing them.
  if (clean) {
    const kept = new Set(files.map((f) => f.path));
    for (const name of readdirSync(dist, { recursive: true })) {
      const path = join(dist, String(name));
      if (kept.has(path) || path.endsWith('.tmp')) continue;
      if (statSync(path, { throwIfNoEntry: false })?.isFile()) rmSync(path, { force: true });
    }
  }
  return files.map((f) => relative(root, f.path));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildCli({ clean: process.argv.includes('--clean') });
