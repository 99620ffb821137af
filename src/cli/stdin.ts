// `plan -` (or `--cluster -`): the cluster dump from standard input, so that
// `kubectl get nodes,pods,pdb,ds -A -o json | eks-consolidator plan -` needs no temporary file.
import { decodeDocuments, INPUT_LIMITS, readBoundedStream } from '../adapters/files/index.ts';
import { InputError } from '../core/errors.ts';
import { parseClusterObjects } from '../core/input/cluster.ts';
import type { Cluster } from '../core/model/types.ts';
import type { CliIo } from './main.ts';

/** The path that means standard input, as kubectl and most Unix tools spell it. */
export const STDIN = '-';
/** How errors name standard input (where they would name a file). */
const STDIN_LABEL = 'stdin';

export async function readClusterStdin(io: CliIo): Promise<Cluster> {
  if (io.readStdin === undefined) throw new InputError('', '', 'standard input cannot be read here').inFile(STDIN_LABEL);
  try {
    return parseClusterObjects(decodeDocuments(await io.readStdin()));
  } catch (error) {
    if (error instanceof InputError) throw error.inFile(STDIN_LABEL);
    throw error;
  }
}

/**
 * Reads a stream to its end as UTF-8 text (the bin passes `process.stdin`), within the cap of a
 * cluster decoded whole: a pipe cannot be read twice, so it cannot be read in parts the way a file is.
 */
export function readAll(stream: AsyncIterable<Buffer | string>): Promise<string> {
  return readBoundedStream(stream, INPUT_LIMITS.clusterWhole);
}
