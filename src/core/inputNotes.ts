// Plan notes about the input itself: things a newcomer's first run hits that would
// otherwise show up only as an empty or oddly priced plan.
// - nodes whose price is unknown, and why (their zone or capacity type missing, their type or zone
//   not in the catalog, usually because the catalog is for another region);
// - a cluster in which no node says which NodePool manages it;
// - pods bound to nodes the input does not hold.
import { nodePricePerHour, osOfNode, osOfType, type PriceIndex } from './disruption/prices.ts';
import { LabelKeys, type Catalog, type Cluster, type Node, type NodePool } from './model/types.ts';

/** Node names in a note: a few, then how many more. */
function names(nodes: readonly Node[], max = 3): string {
  const shown = nodes.slice(0, max).map((n) => n.name).join(', ');
  return nodes.length > max ? `${shown} and ${nodes.length - max} more` : shown;
}

/** Why the catalog has no price for the node (the caller knows it has none). */
export function whyPriceUnknown(node: Node, catalog: Catalog, index: PriceIndex): string {
  if (!node.instanceType) return `it has no ${LabelKeys.instanceType} label`;
  if (!node.capacityType) return `its ${LabelKeys.capacityType} label is missing or not one of on-demand, spot`;
  if (!node.zone) return `it has no ${LabelKeys.zone} label or zone in spec.providerID`;
  const type = index.get(node.instanceType);
  const region = catalog.region ? ` (catalog region ${catalog.region})` : '';
  if (!type) return `instance type ${node.instanceType} is not in the catalog${region}`;
  if (osOfNode(node) !== osOfType(type)) {
    // No instance type named: one note for every node of that OS.
    return `their ${LabelKeys.os} is ${osOfNode(node)} and the catalog has ${osOfType(type)} prices only (a ${osOfNode(node)} instance costs more, its licence included), so no price is assumed`;
  }
  if (!catalog.instanceTypes.some((t) => t.offerings.some((o) => o.zone === node.zone))) {
    return `zone ${node.zone} has no offerings in the catalog${region}: use a catalog for the cluster's region`;
  }
  return `the catalog has no ${node.capacityType} offering of ${node.instanceType} in ${node.zone}`;
}

/**
 * One note per distinct cause of unknown prices among the nodes of configured pools. A node of unknown
 * price may still be deleted, but is never replaced, and its savings are not counted.
 */
export function unknownPriceNotes(cluster: Cluster, nodePools: readonly NodePool[], catalog: Catalog, index: PriceIndex): string[] {
  const configured = new Set(nodePools.map((p) => p.name));
  const byCause = new Map<string, Node[]>();
  for (const node of cluster.nodes) {
    if (node.nodePool === undefined || !configured.has(node.nodePool)) continue;
    if (nodePricePerHour(node, index) !== undefined) continue;
    const cause = whyPriceUnknown(node, catalog, index);
    const list = byCause.get(cause);
    if (list) list.push(node);
    else byCause.set(cause, [node]);
  }
  return [...byCause].map(
    ([cause, nodes]) =>
      `price unknown for ${nodes.length} node(s) (${names(nodes)}): ${cause}; such nodes are shown with price ? / null, may be deleted but are never replaced, and their savings are not counted`,
  );
}

/** A note when no node carries `karpenter.sh/nodepool`, so nothing can be considered. */
export function unmanagedClusterNote(cluster: Cluster, nodePools: readonly NodePool[]): string[] {
  if (cluster.nodes.length === 0 || cluster.nodes.some((n) => n.nodePool !== undefined)) return [];
  const nodeGroups = [...new Set(cluster.nodes.map((n) => n.labels['eks.amazonaws.com/nodegroup']).filter((g): g is string => g !== undefined))];
  const groups = nodeGroups.length > 0 ? `; they belong to EKS managed node group(s) ${nodeGroups.slice(0, 3).join(', ')}${nodeGroups.length > 3 ? ', ...' : ''}` : '';
  const pool = nodePools[0]?.name ?? 'default';
  const lead =
    `none of the ${cluster.nodes.length} node(s) carries the ${LabelKeys.nodePool} label${groups}, so none is managed by a NodePool and nothing was considered ` +
    `(they still count as room for pods). eks-consolidator consolidates the nodes Karpenter launched from a NodePool, which carry ${LabelKeys.nodePool}=<pool>`;
  // Labelling a managed node group's nodes would be wrong advice: its Auto Scaling group relaunches an
  // instance that is terminated, and the label is Karpenter's own, for nodes Karpenter launched.
  if (nodeGroups.length > 0) {
    return [
      `${lead}; nodes of an EKS managed node group are left alone on purpose (its Auto Scaling group would relaunch a terminated instance, and ` +
        `${LabelKeys.nodePool} belongs on nodes Karpenter launched): to consolidate those workloads, run them on a Karpenter NodePool and describe it in --config`,
    ];
  }
  return [`${lead}; to include other nodes, label them, e.g. kubectl label node <node> ${LabelKeys.nodePool}=${pool}, and describe that pool in --config`];
}

/** Pods bound to a node the input does not hold: they take no room anywhere in the simulation. */
export function orphanPodsNote(cluster: Cluster): string[] {
  const known = new Set(cluster.nodes.map((n) => n.name));
  const orphans = cluster.pods.filter((p) => p.nodeName !== undefined && !known.has(p.nodeName) && p.phase !== 'Succeeded' && p.phase !== 'Failed');
  if (orphans.length === 0) return [];
  const shown = orphans.slice(0, 3).map((p) => `${p.namespace}/${p.name} on ${p.nodeName}`).join(', ');
  return [
    `${orphans.length} pod(s) are bound to nodes that are not in the input (${shown}${orphans.length > 3 ? ', ...' : ''}) and were left out; dump nodes and pods together (kubectl get nodes,pods,... -A -o json)`,
  ];
}
