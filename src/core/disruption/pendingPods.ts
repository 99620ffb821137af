// Pending pods in disruption simulations (docs/nodepools.md, "What the fields do"). Karpenter adds the
// cluster's pending pods to every consolidation simulation, so a move never takes away the room they
// were about to use.
//
// Here: the pending pods the cluster can place now, on its existing nodes, must still find a place
// once a move is made (on the remaining nodes or on the move's one replacement). Pending pods that fit
// nowhere now are left out: they wait for new capacity whatever this pass does (Karpenter's provisioner
// launches it), and Karpenter likewise ignores their failures (it requires only the non-pending pods
// to schedule).
import type { Cluster, Pod } from '../model/types.ts';
import { unboundPods } from '../scheduling/clusterChange.ts';
import type { Simulator } from '../scheduling/types.ts';
import { isPending } from './pods.ts';

const placeableNow = new WeakMap<Cluster, readonly Pod[]>();

/** Pending pods of `cluster` that its existing nodes can take now (computed once per cluster state). */
export function placeablePendingPods(cluster: Cluster, simulator: Simulator): readonly Pod[] {
  const known = placeableNow.get(cluster);
  if (known) return known;
  const pending = unboundPods(cluster).filter(isPending);
  let placeable: readonly Pod[] = [];
  if (pending.length > 0) {
    const result = simulator.simulate({ excludedNodes: new Set(), pods: pending, maxNewNodes: 0 });
    const placed = new Set(result.placements.map((p) => p.pod.uid));
    placeable = pending.filter((pod) => placed.has(pod.uid));
  }
  placeableNow.set(cluster, placeable);
  return placeable;
}
