// Scenario helpers for the scheduling tests: a cluster of target nodes, a node `old` that is being
// removed, and the pods that must move off it.
import type {
  Catalog,
  DaemonSet,
  LabelSelector,
  Namespace,
  Node,
  NodePool,
  Pod,
  PodAffinityTerm,
  TopologySpreadConstraint,
} from '../../src/core/model/types.ts';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import type { SimulationRequest, SimulationResult } from '../../src/core/scheduling/types.ts';
import { cluster, m5Catalog, node, nodePool, pod } from '../builders.ts';

export interface Scenario {
  /** Nodes that stay (and may receive pods). */
  readonly nodes?: readonly Node[];
  /** Pods already bound to those nodes. */
  readonly pods?: readonly Pod[];
  /** The pods to place (bound to the excluded node `old`). */
  readonly moving: readonly Pod[];
  readonly daemonSets?: readonly DaemonSet[];
  readonly namespaces?: readonly Namespace[];
  readonly pools?: readonly NodePool[];
  readonly catalog?: Catalog;
  readonly maxNewNodes?: number;
  readonly newNodePools?: readonly string[];
}

export const OLD = 'old';

/** Runs one simulation: `old` (holding `moving`) is excluded and its pods must find a place. */
export function simulateScenario(s: Scenario): SimulationResult {
  const moving = s.moving.map((p) => ({ ...p, nodeName: OLD }));
  const simulator = createSimulator({
    cluster: cluster({
      nodes: [node({ name: OLD }), ...(s.nodes ?? [])],
      pods: [...(s.pods ?? []), ...moving],
      daemonSets: s.daemonSets ?? [],
      namespaces: s.namespaces ?? [],
    }),
    nodePools: s.pools ?? [nodePool()],
    catalog: s.catalog ?? m5Catalog(),
  });
  const request: SimulationRequest = {
    excludedNodes: new Set([OLD]),
    pods: moving,
    maxNewNodes: s.maxNewNodes ?? 0,
    ...(s.newNodePools ? { newNodePools: s.newNodePools } : {}),
  };
  return simulator.simulate(request);
}

/** Where each moving pod went (`name -> node`), `-` when it found no place. */
export function destinations(result: SimulationResult): Record<string, string> {
  const out: Record<string, string> = {};
  for (const placement of result.placements) out[placement.pod.name] = placement.nodeName;
  for (const miss of result.unschedulable) out[miss.pod.name] = '-';
  return out;
}

/** The single moving pod's destination, or `-`. */
export function destinationOf(result: SimulationResult): string {
  const all = Object.values(destinations(result));
  if (all.length !== 1) throw new Error(`expected one pod, got ${all.length}`);
  return all[0]!;
}

export function reasons(result: SimulationResult): string[] {
  return result.unschedulable.map((u) => u.reason);
}

export function term(matchLabels: Record<string, string> | undefined, topologyKey: string, extra: Partial<PodAffinityTerm> = {}): PodAffinityTerm {
  const labelSelector: LabelSelector | undefined = matchLabels ? { matchLabels } : undefined;
  return { ...(labelSelector ? { labelSelector } : {}), namespaces: [], topologyKey, ...extra };
}

export function spread(
  matchLabels: Record<string, string>,
  topologyKey: string,
  extra: Partial<TopologySpreadConstraint> = {},
): TopologySpreadConstraint {
  return { maxSkew: 1, topologyKey, whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels }, ...extra };
}

export const ZONE = 'topology.kubernetes.io/zone';
export const HOSTNAME = 'kubernetes.io/hostname';

/** A pod with the given labels (and no other change), for affinity scenarios. */
export function labelled(name: string, labels: Record<string, string>, extra: Partial<Pod> = {}): Pod {
  return pod({ name, labels, ...extra });
}
