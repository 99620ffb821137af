// Where the embedded demo and the bundled catalog live inside the package.
import { fileURLToPath, pathToFileURL } from 'node:url';

// From the ESM source (CLI, tests) the root is three levels up from this module. In the Lambda's
// CommonJS bundle (serverless-esbuild, format cjs) `import.meta.url` is empty: the files are copied
// into the package by serverless.yml `package.patterns` and the root is the function's task root
// (LAMBDA_TASK_ROOT), or the working directory for `sls invoke local`.
const moduleUrl: string | undefined = import.meta.url;
const root = moduleUrl
  ? new URL('../../../', moduleUrl)
  : pathToFileURL(`${process.env['LAMBDA_TASK_ROOT'] ?? process.cwd()}/`);

/** 1,345 EC2 instance types with allocatable and us-east-1 on-demand prices; spot prices estimated. */
export const bundledCatalogPath = fileURLToPath(new URL('src/adapters/catalog/bundled/catalog.json', root));
export const demoClusterPath = fileURLToPath(new URL('demo/cluster.json', root));
export const demoNodePoolsPath = fileURLToPath(new URL('demo/nodepools.yaml', root));
