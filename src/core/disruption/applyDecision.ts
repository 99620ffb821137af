// The cluster as a decision leaves it, so the next decision of the same pass is computed on it
// (issue: "each computed on the cluster as the earlier ones leave it").
import { type Cluster, type Node, type NodePool, type Pod } from '../model/types.ts';
import type { PlannedReplacement } from '../plan.ts';
import { labelsMatchAlternatives, nodeConstraintAlternatives } from '../scheduling/nodeAffinity.ts';
import { newNodeLabels } from '../scheduling/launchedLabels.ts';
import { firstUntoleratedTaint } from '../scheduling/taints.ts';
import type { NewNodePlan } from '../scheduling/types.ts';
import { changeCluster } from '../scheduling/clusterChange.ts';
import type { Proposal } from './methods/types.ts';

/**
 * Names of a decision's replacements: `replacement-<decision>` for one, `replacement-<decision>.<i>` for
 * several (an m-to-n repack), in the order of the simulation's new nodes. A plan's later waves use
 * their own prefix (`wave2-replacement-1`), so no two planned nodes share a name.
 */
export function replacementNames(decisionNumber: number, count: number, prefix = 'replacement'): string[] {
  if (count === 1) return [`${prefix}-${decisionNumber}`];
  return Array.from({ length: count }, (_, i) => `${prefix}-${decisionNumber}.${i + 1}`);
}

/** Where the simulation put a pod, with the planned new nodes (`new:<i>`) given their replacement names. */
export function destinationName(nodeName: string, names: readonly string[]): string {
  if (!nodeName.startsWith('new:')) return nodeName;
  return names[Number(nodeName.slice(4))] ?? names[0]!;
}

/**
 * Removes the decision's nodes, moves their pods where the simulation put them, and adds each
 * replacement as a Ready node of its cheapest type (what the launch is expected to produce).
 */
export function applyProposal(
  cluster: Cluster,
  proposal: Proposal,
  pools: ReadonlyMap<string, NodePool>,
  nowMs: number,
  names: readonly string[],
): { cluster: Cluster; receivingNodes: Set<string> } {
  const removed = new Set(proposal.candidates.map((c) => c.node.name));
  const destination = destinations(proposal, names);
  const receivingNodes = new Set([...destination.values()]);
  // daemonset, mirror and finished pods (no destination) leave with their node. Made as a change of
  // the cluster, so that the next simulation indexes only the nodes it touches (scheduling/clusterChange.ts).
  const added = replacementNodes(cluster, proposal, pools, nowMs, names);
  const next = changeCluster(cluster, { removedNodes: removed, rebound: destination, addedNodes: added.nodes, addedPods: added.pods });
  return { cluster: next, receivingNodes };
}

/** Pod uid -> where the decision's simulation put it (replacements under their names). */
export function destinations(proposal: Proposal, names: readonly string[]): Map<string, string> {
  const destination = new Map<string, string>();
  for (const placement of proposal.simulation?.placements ?? []) {
    destination.set(placement.pod.uid, destinationName(placement.nodeName, names));
  }
  return destination;
}

/** A decision's replacements as Ready nodes of their cheapest type, with the daemonset pods they will run. */
export function replacementNodes(
  cluster: Cluster,
  proposal: Proposal,
  pools: ReadonlyMap<string, NodePool>,
  nowMs: number,
  names: readonly string[],
): { nodes: Node[]; pods: Pod[] } {
  const nodes: Node[] = [];
  const pods: Pod[] = [];
  for (const [i, replacement] of proposal.replacements.entries()) {
    const plan = proposal.simulation?.newNodes[i];
    if (!plan) continue;
    const node = replacementNode(replacement, plan, pools.get(plan.nodePool), nowMs, names[i]!);
    nodes.push(node);
    pods.push(...daemonSetPodsFor(cluster, node));
  }
  return { nodes, pods };
}

function replacementNode(
  replacement: PlannedReplacement,
  plan: NewNodePlan,
  pool: NodePool | undefined,
  nowMs: number,
  name: string,
): Node {
  const cheapest = plan.options.find((o) => o.instanceType.name === replacement.instanceTypes[0]) ?? plan.options[0]!;
  const offering = cheapest.offerings.find((o) => o.capacityType === replacement.capacityType) ?? cheapest.offerings[0]!;
  const labels = newNodeLabels({
    name,
    typeLabels: cheapest.instanceType.labels,
    instanceType: cheapest.instanceType.name,
    capacityType: offering.capacityType,
    zone: offering.zone,
    pool,
    poolName: plan.nodePool,
  });
  return {
    name,
    labels,
    annotations: {},
    createdAt: nowMs,
    taints: pool?.templateTaints ?? [],
    unschedulable: false,
    zone: offering.zone,
    instanceType: cheapest.instanceType.name,
    capacityType: offering.capacityType,
    nodePool: plan.nodePool,
    allocatable: cheapest.instanceType.allocatable,
    capacity: cheapest.instanceType.capacity,
    ready: true,
    readySince: nowMs,
    deleting: false,
  };
}

/**
 * Pods the cluster's daemonsets would start on the new node (so its free room is counted right): those
 * whose template tolerates its taints and whose node selector / required affinity matches its labels,
 * the same rule the simulation applies to new nodes.
 */
export function daemonSetPodsFor(cluster: Cluster, node: Node): Pod[] {
  const runsHere = cluster.daemonSets.filter(
    (ds) =>
      firstUntoleratedTaint(ds.template.tolerations, node.taints) === undefined &&
      labelsMatchAlternatives(node.labels, nodeConstraintAlternatives(ds.template)),
  );
  return runsHere.map((ds, i) => ({
    ...ds.template,
    uid: `${node.name}/ds-${i}`,
    namespace: ds.namespace,
    name: `${ds.name}-${node.name}`,
    annotations: {},
    ownerReferences: [{ kind: 'DaemonSet', name: ds.name, controller: true }],
    nodeName: node.name,
    phase: 'Running' as const,
    priority: 0,
    terminating: false,
    isDaemonSetPod: true,
    isMirrorPod: false,
  }));
}
