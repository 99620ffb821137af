// The proof before a command's first eviction, on the cluster as the API shows it now (see
// core/disruption/proveCommand.ts for why), with the simulator the plan used.
import { proveCommand, type Proof } from '../../core/disruption/proveCommand.ts';
import type { Catalog, Cluster, NodePool } from '../../core/model/types.ts';
import { createSimulator } from '../../core/scheduling/simulator.ts';

/** What the proof reads: the live cluster, the pools and the catalog. */
export interface ProveWorld {
  readonly cluster: Cluster;
  readonly nodePools: readonly NodePool[];
  readonly catalog: Catalog;
}

export function proveLive(world: ProveWorld, oldNodes: readonly string[]): Proof {
  return proveCommand({ ...world, oldNodes, simulatorFactory: createSimulator });
}
