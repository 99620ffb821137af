// Which labels a node launched for a NodePool will carry, for node selectors, affinity and topology.
//
// Karpenter labels the nodes it launches with everything it knows: the pool's template labels, its
// requirements, the instance type's own labels (`karpenter.k8s.aws/instance-family`, ...) and the
// offering (`karpenter.sh/capacity-type`, zone). The simulation's model of a new node (newNode.ts) is
// that one, after Karpenter's scheduler.
//
// A pool with no Karpenter behind it (the `ec2` actuator launches from the pool's launch template) gets
// nodes labelled by the kubelet and by the template's user data only. A pod that selects a label such a
// node lacks stays Pending on it, whatever the plan said. So for such a pool a new node carries only:
//   - what the kubelet and the cloud provider put on every node (hostname, os, arch, instance type,
//     zone, region, and their older beta names);
//   - the pool's own template labels and its `karpenter.sh/nodepool` (how a node is known to be the
//     pool's at all);
//   - every label key each existing node of the pool carries: the same user data put it there.
// Any other key is absent on it: a requirement that needs the key (In, Exists, Gt, Lt) cannot be met
// there, one that a missing label satisfies (NotIn, DoesNotExist) is.
import type { Labels, Node, NodePool } from '../model/types.ts';
import { LabelKeys } from '../model/types.ts';

/** Labels the kubelet (and the AWS cloud provider) put on every node, however it was launched. */
export const KUBELET_LABEL_KEYS: ReadonlySet<string> = new Set([
  LabelKeys.hostname,
  LabelKeys.os,
  LabelKeys.arch,
  LabelKeys.instanceType,
  LabelKeys.zone,
  LabelKeys.region,
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
]);

/** Whether a node launched for `pool` carries label `key` (always, for a pool Karpenter launches for). */
export function carriesLabel(pool: NodePool, key: string): boolean {
  const keys = pool.launchedLabelKeys;
  return keys === undefined || keys.has(key) || KUBELET_LABEL_KEYS.has(key);
}

/** `labels` (a new node's, built the way Karpenter labels it) less what a node launched for `pool` lacks. */
export function launchedLabels(pool: NodePool | undefined, labels: Labels): Labels {
  if (pool?.launchedLabelKeys === undefined) return labels;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(labels)) if (carriesLabel(pool, key)) out[key] = value;
  return out;
}

/**
 * The label keys a node launched from `pool`'s launch template carries beyond the kubelet's: the
 * template labels, the pool label, and the keys every existing node of the pool has.
 */
export function launchTemplateLabelKeys(pool: NodePool, nodes: readonly Node[]): ReadonlySet<string> {
  const keys = new Set<string>([...Object.keys(pool.templateLabels), LabelKeys.nodePool]);
  let common: Set<string> | undefined;
  for (const node of nodes) {
    if (node.nodePool !== pool.name) continue;
    common = common === undefined ? new Set(Object.keys(node.labels)) : new Set([...common].filter((k) => Object.hasOwn(node.labels, k)));
  }
  for (const key of common ?? []) keys.add(key);
  return keys;
}

/** A node about to be launched (or launching) for a pool, as the plan knows it. */
export interface LaunchedNode {
  readonly name: string;
  /** The instance type's own labels (arch, `karpenter.k8s.aws/instance-family`, ...). */
  readonly typeLabels: Labels;
  readonly instanceType: string;
  readonly capacityType: string;
  readonly zone: string | undefined;
  readonly pool: NodePool | undefined;
  readonly poolName: string | undefined;
}

/**
 * The labels of a node launched for a pool: the type's, the template's, hostname, zone, instance type,
 * capacity type and pool, the way Karpenter labels its NodeClaims; less, for a pool launched from its
 * launch template, the keys such a node lacks.
 */
export function newNodeLabels(node: LaunchedNode): Labels {
  return launchedLabels(node.pool, {
    ...node.typeLabels,
    ...(node.pool?.templateLabels ?? {}),
    [LabelKeys.hostname]: node.name,
    [LabelKeys.instanceType]: node.instanceType,
    [LabelKeys.capacityType]: node.capacityType,
    ...(node.zone === undefined ? {} : { [LabelKeys.zone]: node.zone }),
    ...(node.poolName === undefined ? {} : { [LabelKeys.nodePool]: node.poolName }),
  });
}
