// The CLI's input files (docs/file-formats.md): cluster dump, instance-type catalog, NodePools. Each
// reader decodes the file (documents.ts) and hands the documents to the pure parser in src/core/input.
import { InputError } from '../../core/errors.ts';
import { parseCatalog } from '../../core/input/catalog.ts';
import { parseNodePools } from '../../core/input/nodePools.ts';
import type { Catalog, NodePool } from '../../core/model/types.ts';
import { INPUT_LIMITS } from './boundedText.ts';
import { decodeDocuments, parseFile, readText } from './documents.ts';

export { decodeDocuments, parseFile, readText };
export { INPUT_LIMITS, readBoundedStream } from './boundedText.ts';

export { readClusterFile } from './clusterFile.ts';

/** The catalog: exactly one JSON (or YAML) document. */
export function readCatalogFile(path: string): Promise<Catalog> {
  return parseFile(path, INPUT_LIMITS.catalog, (documents) => {
    if (documents.length !== 1) throw new InputError('', '', `expected one catalog document, found ${documents.length}`);
    return parseCatalog(documents[0]);
  });
}

/** NodePools as a YAML stream (or JSON List). A file with no NodePool at all is an error. */
export function readNodePoolsFile(path: string): Promise<NodePool[]> {
  return parseFile(path, INPUT_LIMITS.nodePools, (documents) => {
    const pools = parseNodePools(documents);
    if (pools.length === 0) throw new InputError('', '', 'no NodePool (kind: NodePool) found');
    return pools;
  });
}
