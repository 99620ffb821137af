// Where the embedded demo and the bundled catalog live inside the package.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const CATALOG = 'src/adapters/catalog/bundled/catalog.json';

// From ESM (the TypeScript source under tests and tsx, or the CLI's bundle in dist/) the root is the
// nearest folder above this module that holds the bundled catalog. In the Lambda's CommonJS bundle
// (serverless-esbuild, format cjs) `import.meta.url` is empty: serverless.yml `package.patterns` copies
// the files next to the bundle, into the working directory of the function (Lambda runs in its task
// root; `sls invoke local` runs in .esbuild/.build).
const moduleUrl: string | undefined = import.meta.url;
const root = moduleUrl ? pathToFileURL(`${rootAbove(dirname(fileURLToPath(moduleUrl)))}/`) : pathToFileURL(`${bundleRoot()}/`);

function rootAbove(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, CATALOG))) return dir;
    if (dirname(dir) === dir) return start;
  }
}

/** The package's root folder (package.json, demo/, the bundled catalog). */
export const packageRoot = fileURLToPath(root);

function bundleRoot(): string {
  const candidates = [process.cwd(), process.env['LAMBDA_TASK_ROOT']].filter((d): d is string => d !== undefined && d !== '');
  return candidates.find((dir) => existsSync(join(dir, CATALOG))) ?? candidates[0]!;
}

/** 1,345 EC2 instance types with allocatable and us-east-1 on-demand prices; spot prices estimated. */
export const bundledCatalogPath = fileURLToPath(new URL(CATALOG, root));
export const demoClusterPath = fileURLToPath(new URL('demo/cluster.json', root));
export const demoNodePoolsPath = fileURLToPath(new URL('demo/nodepools.yaml', root));

/** The moment the demo cluster was recorded at; planning it at another time replays it then. */
export const DEMO_RECORDED_AT = Date.parse('2026-11-21T12:00:00Z');
