// Builds the CLI into one ES module, dist/eks-consolidator.mjs (dependencies stay in node_modules), so
// that starting it does not compile TypeScript. Run by `npm ci` / `npm install` (prepare) and before
// the tests (test/globalSetup.ts); bin/eks-consolidator.mjs falls back to the source through tsx when
// the bundle is missing or older than src/.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

export async function buildCli() {
  await build({
    absWorkingDir: root,
    entryPoints: ['src/cli/run.ts'],
    outfile: 'dist/eks-consolidator.mjs',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildCli();
