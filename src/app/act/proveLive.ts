// The proof before a command's first eviction, on the cluster as the API shows it now (see
// core/disruption/proveCommand.ts for why), with the simulator the plan used.
import { proveCommand, withPlacements, type Proof } from '../../core/disruption/proveCommand.ts';
import type { Catalog, Cluster, NodePool, Pod } from '../../core/model/types.ts';
import { createSimulator } from '../../core/scheduling/simulator.ts';

/** What the proof reads: the live cluster, the pools and the catalog. */
export interface ProveWorld {
  readonly cluster: Cluster;
  readonly nodePools: readonly NodePool[];
  readonly catalog: Catalog;
}

/**
 * The proofs of one invocation. A reading of the live world is shared by the commands proven in the
 * same polling round (a read of a large cluster costs seconds) and taken again when a command's own
 * replacements are not in it yet. Every pod an earlier proof of this invocation placed keeps its room
 * in later proofs: several commands in flight together must not each count the same free room.
 */
export class ProofSession {
  private reading: Promise<ProveWorld> | undefined;
  private readonly placed = new Map<string, { readonly pod: Pod; readonly node: string }>();

  constructor(private readonly read: () => Promise<ProveWorld>) {}

  /** Forget the reading: the next proof reads the cluster again. */
  newRound(): void {
    this.reading = undefined;
  }

  async prove(oldNodes: readonly string[], ownReplacements: readonly string[] = []): Promise<Proof> {
    let world = await this.current();
    if (ownReplacements.some((name) => !world.cluster.nodes.some((n) => n.name === name))) {
      this.reading = undefined;
      world = await this.current();
    }
    const cluster = withPlacements(world.cluster, [...this.placed.values()]);
    const proof = proveCommand({ ...world, cluster, oldNodes, ownReplacements, simulatorFactory: createSimulator });
    if (proof.ok) for (const p of proof.placed) this.placed.set(p.pod.uid, p);
    return proof;
  }

  private async current(): Promise<ProveWorld> {
    this.reading ??= this.read();
    try {
      return await this.reading;
    } catch (error) {
      this.reading = undefined;
      throw error;
    }
  }
}
