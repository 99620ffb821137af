// A necessary condition for a removal, checked before simulating it (the multi-node search
// tries prefixes of hundreds of nodes, and simulating one that cannot fit places thousands of pods before
// it fails): the moved pods' cpu and memory requests, and their number, must not exceed the free room
// and pod slots of the receiving nodes that stay plus the largest replacement the move may launch. Room is counted generously (taints,
// affinity, daemonset overhead and fragmentation ignored), so a prefix refused here is one the
// simulation would refuse too; the plan is the same, only reached with fewer simulations.
import type { Catalog, Cluster } from '../../model/types.ts';
import { indexCluster } from '../../scheduling/existingNodes.ts';
import type { Candidate } from '../candidates.ts';
import { maxReplacementAllocatable, type ReplacementBound } from '../sizeBound.ts';

export class RoomBound {
  private readonly freeCpuByNode = new Map<string, number>();
  private readonly freeMemoryByNode = new Map<string, number>();
  private readonly freePodsByNode = new Map<string, number>();
  private totalFreeCpu = 0;
  private totalFreeMemory = 0;
  private totalFreePods = 0;
  /** Catalog types as (cpu, memory, pods) allocatable, for the most pod slots a bounded replacement can have. */
  private readonly types: readonly { cpu: number; memory: number; pods: number }[];

  constructor(cluster: Cluster, catalog: Catalog) {
    this.types = catalog.instanceTypes.map((t) => ({
      cpu: t.allocatable['cpu'] ?? 0,
      memory: t.allocatable['memory'] ?? 0,
      pods: t.allocatable['pods'] ?? Number.POSITIVE_INFINITY,
    }));
    // The simulation's own free room (its index is kept per cluster, and the round simulates this
    // cluster anyway), never below zero; only its receiving nodes can take a moved pod.
    for (const node of indexCluster(cluster).nodes) {
      if (!node.receives) continue;
      const cpu = Math.max(0, node.freeCpu);
      const memory = Math.max(0, node.freeMemory);
      const pods = Math.max(0, node.freePods);
      this.freeCpuByNode.set(node.name, cpu);
      this.freeMemoryByNode.set(node.name, memory);
      this.freePodsByNode.set(node.name, pods);
      this.totalFreeCpu += cpu;
      this.totalFreeMemory += memory;
      this.totalFreePods += pods;
    }
  }

  /** False only when the candidates' pods certainly cannot all find room (at most `maxNewNodes` new nodes). */
  mayFit(candidates: readonly Candidate[], bound: ReplacementBound | null, maxNewNodes: number): boolean {
    if (bound === null || maxNewNodes < 0) return true;
    let needCpu = 0;
    let needMemory = 0;
    let needPods = 0;
    let roomCpu = this.totalFreeCpu;
    let roomMemory = this.totalFreeMemory;
    let roomPods = this.totalFreePods;
    for (const c of candidates) {
      for (const pod of c.pods) {
        needCpu += pod.requests['cpu'] ?? 0;
        needMemory += pod.requests['memory'] ?? 0;
      }
      needPods += c.pods.length;
      roomCpu -= this.freeCpuByNode.get(c.node.name) ?? 0;
      roomMemory -= this.freeMemoryByNode.get(c.node.name) ?? 0;
      roomPods -= this.freePodsByNode.get(c.node.name) ?? 0;
    }
    const largest = maxReplacementAllocatable(candidates, bound);
    // The replacement's pod slots: the most of any catalog type within the size bound (and the cap).
    let newPods = 0;
    for (const t of this.types) if (t.cpu <= largest.cpu && t.memory <= largest.memory && t.pods > newPods) newPods = t.pods;
    if (bound.maxPods !== undefined) newPods = Math.min(newPods, bound.maxPods);
    roomCpu += maxNewNodes * largest.cpu;
    roomMemory += maxNewNodes * largest.memory;
    roomPods += maxNewNodes * newPods;
    return needCpu <= roomCpu && needMemory <= roomMemory && needPods <= roomPods;
  }
}
