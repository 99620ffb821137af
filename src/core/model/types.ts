// The domain model every part of the product speaks. Adapters turn Kubernetes objects, catalog files,
// EC2 answers and NodePool YAML into these shapes; the core only ever sees these.
//
// Units are in the names or stated here once:
// - resource amounts (`Resources`): `cpu` in millicores, every other resource in its base unit
//   (bytes for memory and ephemeral-storage, a count for pods and extended resources);
// - times are epoch milliseconds (`...At`, `...Ms` for durations);
// - prices are US dollars per hour (`pricePerHour`).

export type Labels = Readonly<Record<string, string>>;

/** cpu in millicores; every other resource in its base unit (bytes, count). */
export type Resources = Readonly<Record<string, number>>;

export type CapacityType = 'on-demand' | 'spot';

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: TaintEffect;
}

export interface Toleration {
  readonly key?: string;
  /** `Equal` when absent, as Kubernetes defaults it. */
  readonly operator?: 'Exists' | 'Equal';
  readonly value?: string;
  /** Absent means every effect. */
  readonly effect?: TaintEffect;
}

/** `Gte` / `Lte` (inclusive bounds) exist only in Karpenter v1.14's NodePool requirements. */
export type SelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | 'Gte' | 'Lte';

/** A node-selector requirement (node affinity, NodePool requirements). */
export interface Requirement {
  readonly key: string;
  readonly operator: SelectorOperator;
  readonly values: readonly string[];
  /**
   * NodePool requirements only (Karpenter's `minValues`): a launch must offer instance types with at
   * least this many distinct values of `key`.
   */
  readonly minValues?: number;
}

/** One term of required node affinity: all of its requirements must hold. Terms are ORed. */
export interface NodeSelectorTerm {
  readonly matchExpressions: readonly Requirement[];
}

/** A Kubernetes label selector (PDBs, pod affinity, topology spread). */
export interface LabelSelector {
  readonly matchLabels?: Labels;
  readonly matchExpressions?: readonly {
    readonly key: string;
    readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    readonly values?: readonly string[];
  }[];
}

export interface PodAffinityTerm {
  /** Absent selector matches no pod (Kubernetes semantics). */
  readonly labelSelector?: LabelSelector;
  /** Namespaces the selector applies to; empty means the pod's own namespace unless a namespaceSelector is set. */
  readonly namespaces: readonly string[];
  /** Present (even empty `{}`, meaning all namespaces) when the term selects namespaces by label. */
  readonly namespaceSelector?: LabelSelector;
  readonly topologyKey: string;
}

/** A preferred node-affinity term: nodes matching `preference` are preferred by `weight` (1-100). */
export interface WeightedNodeSelectorTerm {
  readonly weight: number;
  readonly preference: NodeSelectorTerm;
}

/** A preferred pod (anti-)affinity term, by `weight` (1-100). */
export interface WeightedPodAffinityTerm {
  readonly weight: number;
  readonly term: PodAffinityTerm;
}

export interface TopologySpreadConstraint {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
  readonly labelSelector?: LabelSelector;
  readonly minDomains?: number;
  /** Honor (default) | Ignore: whether node affinity/selector of the pod limits the counted domains. */
  readonly nodeAffinityPolicy?: 'Honor' | 'Ignore';
  /** Ignore (default) | Honor: whether tainted nodes count as domains. */
  readonly nodeTaintsPolicy?: 'Honor' | 'Ignore';
  readonly matchLabelKeys?: readonly string[];
}

export interface HostPort {
  readonly port: number;
  readonly protocol: string;
  readonly hostIP?: string;
}

export interface OwnerReference {
  readonly kind: string;
  readonly name: string;
  readonly uid?: string;
  readonly apiVersion?: string;
  readonly controller: boolean;
}

/** What the scheduler needs to know about a pod (or a daemonset's pod template). */
export interface PodSchedulingSpec {
  /** Effective requests: max(sum of containers, largest init container) plus pod overhead. */
  readonly requests: Resources;
  readonly nodeSelector: Labels;
  /** Required node affinity terms (ORed). Empty: no constraint. */
  readonly requiredNodeAffinity: readonly NodeSelectorTerm[];
  readonly tolerations: readonly Toleration[];
  /** Required pod affinity terms (all must hold). */
  readonly podAffinity: readonly PodAffinityTerm[];
  /** Required pod anti-affinity terms (all must hold). */
  readonly podAntiAffinity: readonly PodAffinityTerm[];
  /** Includes `ScheduleAnyway` constraints (preferences; see preferredNodeAffinity). */
  readonly topologySpread: readonly TopologySpreadConstraint[];
  readonly hostPorts: readonly HostPort[];
  /**
   * Preferences (absent when the pod states none). kube-scheduler only scores them; Karpenter's default
   * preference policy (Respect) first schedules as if they were required and relaxes them one by one
   * when nothing fits (core/scheduling/preferences.ts).
   */
  readonly preferredNodeAffinity?: readonly WeightedNodeSelectorTerm[];
  readonly preferredPodAffinity?: readonly WeightedPodAffinityTerm[];
  readonly preferredPodAntiAffinity?: readonly WeightedPodAffinityTerm[];
  /**
   * Zones the pod's persistent volumes pin it to (intersection over its volumes), or undefined when
   * no volume constrains it. Zonal volumes (EBS) cannot follow a pod to another zone.
   */
  readonly volumeZones?: readonly string[];
  /**
   * Nodes (hostnames) the pod's persistent volumes pin it to, or undefined when none does: a volume
   * whose PersistentVolume's node affinity names hosts, other than a `local` or `hostPath` one (whose
   * host terms Karpenter drops, the data being left behind by design). Such a pod can only run where it is.
   */
  readonly volumeHosts?: readonly string[];
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export interface Pod extends PodSchedulingSpec {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly labels: Labels;
  readonly annotations: Readonly<Record<string, string>>;
  readonly ownerReferences: readonly OwnerReference[];
  readonly nodeName?: string;
  readonly phase: PodPhase;
  /** Resolved PriorityClass value (spec.priority), 0 when absent. */
  readonly priority: number;
  readonly createdAt?: number;
  readonly startedAt?: number;
  /** metadata.deletionTimestamp set. */
  readonly terminating: boolean;
  /** metadata.deletionTimestamp, epoch ms (when the pod was asked to go). */
  readonly deletingSince?: number;
  /** spec.terminationGracePeriodSeconds (Kubernetes defaults it to 30). */
  readonly terminationGracePeriodSeconds?: number;
  /** Owned by a DaemonSet: recreated by its controller on every node, never needs to move. */
  readonly isDaemonSetPod: boolean;
  /** Static (mirror) pod: belongs to the node itself. */
  readonly isMirrorPod: boolean;
}

export interface Node {
  readonly name: string;
  /**
   * metadata.uid: tells this Node object from a later one registered under the same name (EKS names
   * nodes after their private IP, which EC2 reuses). Commands record it and act only while it matches.
   */
  readonly uid?: string;
  readonly labels: Labels;
  readonly annotations: Readonly<Record<string, string>>;
  readonly createdAt: number;
  readonly taints: readonly Taint[];
  /** spec.unschedulable (cordoned). */
  readonly unschedulable: boolean;
  readonly providerId?: string;
  readonly instanceId?: string;
  readonly zone?: string;
  readonly instanceType?: string;
  readonly capacityType?: CapacityType;
  /** karpenter.sh/nodepool label; undefined when the node is not managed by any pool. */
  readonly nodePool?: string;
  readonly allocatable: Resources;
  readonly capacity: Resources;
  readonly ready: boolean;
  /** lastTransitionTime of the Ready condition when Ready. */
  readonly readySince?: number;
  /** metadata.deletionTimestamp set. */
  readonly deleting: boolean;
}

export interface PodDisruptionBudget {
  readonly namespace: string;
  readonly name: string;
  readonly selector: LabelSelector;
  readonly disruptionsAllowed: number;
}

export interface DaemonSet {
  readonly namespace: string;
  readonly name: string;
  readonly template: PodSchedulingSpec & { readonly labels: Labels };
}

/**
 * A workload controller's readiness, used by the stabilization window (Karpenter's consolidation
 * design).
 */
export interface WorkloadStatus {
  readonly kind: 'Deployment' | 'StatefulSet' | 'ReplicaSet';
  readonly namespace: string;
  readonly name: string;
  readonly desiredReplicas: number;
  readonly readyReplicas: number;
}

export interface Namespace {
  readonly name: string;
  readonly labels: Labels;
}

export interface Cluster {
  readonly nodes: readonly Node[];
  readonly pods: readonly Pod[];
  readonly pdbs: readonly PodDisruptionBudget[];
  readonly daemonSets: readonly DaemonSet[];
  readonly workloads: readonly WorkloadStatus[];
  readonly namespaces: readonly Namespace[];
}

export interface Offering {
  readonly zone: string;
  readonly capacityType: CapacityType;
  readonly pricePerHour: number;
  readonly available: boolean;
  /** True when the price is an estimate (the bundled catalog's spot prices), not a quoted price. */
  readonly priceIsEstimate?: boolean;
}

export interface InstanceType {
  readonly name: string;
  readonly capacity: Resources;
  readonly allocatable: Resources;
  /** Well-known labels a node of this type carries (arch, os, instance-type, karpenter.k8s.aws/...). */
  readonly labels: Labels;
  readonly offerings: readonly Offering[];
}

export interface Catalog {
  readonly region: string;
  readonly instanceTypes: readonly InstanceType[];
  /** Where the data came from, for the plan's header and warnings. */
  readonly source?: string;
  /** When the prices were fetched or generated (epoch ms), if known. */
  readonly pricesAsOf?: number;
}

export type ConsolidationPolicy =
  | 'WhenEmpty'
  | 'WhenEmptyOrUnderutilized'
  | 'WhenUnderutilized'
  | 'WhenCheaper'
  | 'WhenUnderutilizedOrCheaper'
  // Karpenter v1.14: every move is scored (core/disruption/balancedScore.ts).
  | 'Balanced';

export type DisruptionReason = 'Empty' | 'Underutilized' | 'Drifted' | 'Expired';

export interface Budget {
  /** Either an absolute node count or a percentage of the pool's nodes (rounded up). */
  readonly nodes: { readonly count: number } | { readonly percent: number };
  /** Cron schedule (UTC) at which the budget becomes active; with durationMs. */
  readonly schedule?: string;
  readonly durationMs?: number;
  /** Reasons the budget applies to; undefined means all reasons. */
  readonly reasons?: readonly DisruptionReason[];
}

export interface NodePool {
  readonly name: string;
  readonly weight: number;
  readonly templateLabels: Labels;
  readonly templateTaints: readonly Taint[];
  readonly requirements: readonly Requirement[];
  /** null means Never. */
  readonly expireAfterMs: number | null;
  readonly consolidationPolicy: ConsolidationPolicy;
  /** null means Never (consolidation disabled). */
  readonly consolidateAfterMs: number | null;
  /** null means unset or Never (no grace period). */
  readonly consolidationGracePeriodMs: number | null;
  /**
   * Karpenter's savings-threshold design: cents per hour of savings required per unit of disruption
   * cost.
   */
  readonly savingsThresholdCents: number;
  /**
   * `Balanced` pools only: the tolerance k (a move passes when its score >= 1/k). Karpenter v1.14 fixes
   * it at 2; the handover annotation may set 1 to 3 (the RFC's integer form). Undefined: 2.
   */
  readonly balancedK?: number;
  readonly budgets: readonly Budget[];
  /** spec.limits: cpu (millicores), memory (bytes), possibly others. Empty: unlimited. */
  readonly limits: Resources;
  /** Provider-specific launch settings (EC2 launch template, subnets) for the actuator; opaque to the core. */
  readonly launch?: Readonly<Record<string, unknown>>;
  /**
   * What a NodeClaim built from this pool carries besides labels, taints and requirements (the
   * `karpenter` actuator builds its replacements from it, as Karpenter's provisioner builds them from
   * the NodePool's template). Absent when the pool declares no `nodeClassRef`: such a pool cannot be
   * acted on through Karpenter.
   */
  readonly nodeClaimTemplate?: NodeClaimTemplateSource;
  /**
   * Whether Karpenter's own disruption controller, reading this pool's `spec.disruption`, would
   * consolidate its nodes (consolidateAfter not Never, and not every consolidation budget fixed at 0).
   * Undefined: as if true. See core/disruption/coexistence.ts.
   */
  readonly karpenterConsolidates?: boolean;
  /** True when the disruption settings above come from the `eks-consolidator.io/disruption` annotation. */
  readonly handedOver?: boolean;
  /**
   * `spec.replicas` (Karpenter v1.14 static NodePool): a fixed node count. Its nodes are never
   * consolidated and it launches no node for pods; they may still receive pods.
   */
  readonly replicas?: number;
  /**
   * Set for a pool whose nodes are launched from its launch template, not by Karpenter (the `ec2`
   * actuator): the label keys such a node carries besides the kubelet's. Undefined: Karpenter labels
   * its nodes with everything it knows. See core/scheduling/launchedLabels.ts.
   */
  readonly launchedLabelKeys?: ReadonlySet<string>;
}

/** Well-known label keys. */
export const LabelKeys = {
  hostname: 'kubernetes.io/hostname',
  zone: 'topology.kubernetes.io/zone',
  region: 'topology.kubernetes.io/region',
  instanceType: 'node.kubernetes.io/instance-type',
  arch: 'kubernetes.io/arch',
  os: 'kubernetes.io/os',
  capacityType: 'karpenter.sh/capacity-type',
  nodePool: 'karpenter.sh/nodepool',
} as const;

export const Annotations = {
  doNotDisrupt: 'karpenter.sh/do-not-disrupt',
  doNotEvictLegacy: 'karpenter.sh/do-not-evict',
  doNotConsolidateLegacy: 'karpenter.sh/do-not-consolidate',
  podDeletionCost: 'controller.kubernetes.io/pod-deletion-cost',
  mirrorPod: 'kubernetes.io/config.mirror',
} as const;

/** The taint the product puts on nodes it is disrupting (Karpenter's). */
export const DisruptedTaint: Taint = { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' };

/** The parts of a NodePool's `spec.template` (and metadata) a NodeClaim copies, as written. */
export interface NodeClaimTemplateSource {
  /** NodePool metadata.uid (the NodeClaim's owner reference), when read from the cluster. */
  readonly nodePoolUid?: string;
  /** spec.template.metadata.annotations. */
  readonly annotations: Labels;
  /**
   * `karpenter.sh/nodepool-hash` and `karpenter.sh/nodepool-hash-version` from the NodePool's own
   * metadata (Karpenter's hash controller writes them): copied so drift detection works later.
   */
  readonly hashAnnotations: Labels;
  readonly startupTaints: readonly Taint[];
  /** spec.template.spec.nodeClassRef: `{ group, kind, name }`. */
  readonly nodeClassRef: { readonly group: string; readonly kind: string; readonly name: string };
  /** spec.template.spec.expireAfter as written (`720h`, `Never`); absent: Karpenter's default applies. */
  readonly expireAfter?: string;
  /** spec.template.spec.terminationGracePeriod as written; absent when unset. */
  readonly terminationGracePeriod?: string;
  /** spec.template.spec.requirements as written (minValues kept), in order. */
  readonly requirements: readonly { readonly key: string; readonly operator: string; readonly values?: readonly string[]; readonly minValues?: number }[];
}

/** The taint the product puts on nodes it drains itself, in both actuators (Karpenter strips its own from nodes outside its queue). */
export const DisruptingTaint: Taint = { key: 'eks-consolidator.io/disrupting', effect: 'NoSchedule' };

/**
 * The taint the interruption function puts on a node whose instance (one this product launched) got a
 * spot interruption warning, a rebalance recommendation or a scheduled change, as the queue mode of
 * aws-node-termination-handler taints such nodes: nothing new is scheduled there, and a consolidation
 * pass neither disrupts the node nor counts on its room. Nothing but the instance's end removes it.
 */
export const InterruptedTaint: Taint = { key: 'eks-consolidator.io/interrupted', effect: 'NoSchedule' };
