// Where the embedded demo and the bundled catalog live inside the package.
import { fileURLToPath } from 'node:url';

const root = new URL('../../../', import.meta.url);

/** 1,345 EC2 instance types with allocatable and us-east-1 on-demand prices; spot prices estimated. */
export const bundledCatalogPath = fileURLToPath(new URL('src/adapters/catalog/bundled/catalog.json', root));
export const demoClusterPath = fileURLToPath(new URL('demo/cluster.json', root));
export const demoNodePoolsPath = fileURLToPath(new URL('demo/nodepools.yaml', root));
