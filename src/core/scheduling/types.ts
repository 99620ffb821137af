// The scheduling simulation's contract. It answers one question and knows nothing of disruption:
// can these pods run on the cluster's remaining nodes plus at most K new nodes drawn from the
// NodePools' offerings? (Karpenter's consolidation design: consolidation decides by simulating
// scheduling).
import type {
  Catalog,
  Cluster,
  InstanceType,
  NodePool,
  Offering,
  Pod,
  Requirement,
} from '../model/types.ts';

export interface SimulatorInput {
  readonly cluster: Cluster;
  readonly nodePools: readonly NodePool[];
  readonly catalog: Catalog;
}

/** How `costEfficientNewNodes` prices a type (the launch price of its offerings) and how much slack it allows. */
export interface NewNodeEfficiency {
  readonly pricePerHour: (offerings: readonly Offering[]) => number;
  /** 0.15: a type up to 15% dearer per unit than the cheapest may still be chosen. */
  readonly tolerance: number;
  /**
   * Keep room for the largest moved pod from the node's first pod on (default: from its second, so a
   * node sized for one large pod alone is still possible).
   */
  readonly roomFromFirstPod?: boolean;
  /**
   * Keep at least this much room, when more than the moved pods' own largest: the largest pod of every
   * command carried out beside this one, which kube-scheduler may send to this node first as well.
   */
  readonly roomAtLeast?: { readonly cpuMillis: number; readonly memoryBytes: number };
}

export interface SimulationRequest {
  /** Nodes treated as gone: they receive no pods and their pods do not count for affinity/spread. */
  readonly excludedNodes: ReadonlySet<string>;
  /**
   * Pods to place (typically the reschedulable pods of the excluded nodes). A pod bound to a node that
   * stays (its `nodeName`, as the cluster has it) leaves that node first, freeing its room; a pod that
   * names no node is new to the cluster and frees nothing.
   */
  readonly pods: readonly Pod[];
  /** At most this many new nodes may be opened. 0: existing capacity only. */
  readonly maxNewNodes: number;
  /** Restrict new nodes to these pools (default: every pool). */
  readonly newNodePools?: readonly string[];
  /**
   * Stop at the first pod that fits nowhere (its reason is the only one reported). Callers that only
   * need a yes/no save the cost of placing the rest, which dominates when large sets are tried.
   */
  readonly stopAtFirstFailure?: boolean;
  /**
   * Which existing node a pod goes to among those it fits: `best-fit` (default) packs tightly, as
   * Karpenter's simulation does; `least-allocated` follows kube-scheduler's default scoring (the node
   * left with the largest share of cpu and memory free), to check a plan against the real scheduler.
   */
  readonly placement?: 'best-fit' | 'least-allocated';
  /**
   * With `least-allocated`: score nodes in kube-scheduler's own whole points (each resource's free share
   * out of 100 rounded down, then their mean rounded down), so nodes a little apart tie, and pick among
   * the tied nodes by this seed, as kube-scheduler picks among them at random. Absent: exact shares,
   * ties by name.
   */
  readonly integerScoreTies?: number;
  /** Order pods are placed in: largest first (default), or as given (a scheduler queue's order). */
  readonly podOrder?: 'largest-first' | 'as-given';
  /** Instance types a new node may be (default: all the pools allow); e.g. a size or price cap. */
  readonly newNodeTypes?: (type: InstanceType, offerings: readonly Offering[]) => boolean;
  /**
   * Size new nodes for cost instead of for room: each new node may only be a type whose price per unit
   * of what the request's pods ask (their cpu and memory in proportion) is within `tolerance` of the
   * cheapest per unit among the types that could take its first pod. Default (absent): as Karpenter,
   * a new node takes every type the pool allows and keeps taking pods while one of them has room.
   */
  readonly costEfficientNewNodes?: NewNodeEfficiency;
  /**
   * Existing nodes that join part-way (with `podOrder: 'as-given'` and `least-allocated`): node name ->
   * position in `pods` of the first pod that may be placed there (a replacement that is Ready only when
   * its own command drains). Nodes not listed are there from the first pod.
   */
  readonly availableFrom?: ReadonlyMap<string, number>;
  /**
   * Existing nodes that take no pod moved off another node that stays (a consolidation candidate's):
   * nodes still inside their NodePool's consolidateAfter window, which Karpenter's consolidation
   * simulation refuses as destinations. A pod that names no node (pending) or comes off a node being
   * deleted may still go there.
   */
  readonly closedToMovedPods?: ReadonlySet<string>;
  /**
   * Karpenter's preference policy: `Respect` places each pod with its preferences (preferred node and pod
   * (anti-)affinity, ScheduleAnyway spread) required first and gives them up one by one only when it
   * fits nowhere (preferences.ts); `Ignore` (default) reads only what the pod requires. Best-fit
   * placement only: kube-scheduler's (least-allocated) only scores preferences.
   */
  readonly preferences?: 'Respect' | 'Ignore';
}

/** One instance type a new node could be, with the offerings (zone x capacity type) still allowed. */
export interface NewNodeOption {
  readonly instanceType: InstanceType;
  /** Available offerings compatible with the pool and every pod on the node, cheapest first. */
  readonly offerings: readonly Offering[];
  /** Price of the cheapest allowed offering. */
  readonly cheapestPricePerHour: number;
}

export interface NewNodePlan {
  readonly nodePool: string;
  readonly pods: readonly Pod[];
  /** Every instance type that can host all `pods` plus daemonset overhead within pool limits, cheapest first. */
  readonly options: readonly NewNodeOption[];
  /** The pool's requirements narrowed by the pods (zones, capacity types, arch ...). */
  readonly requirements: readonly Requirement[];
  /** The pool's requirements that carry `minValues` (launch flexibility the replacement must keep). */
  readonly minValues?: readonly Requirement[];
}

export interface Placement {
  readonly pod: Pod;
  /** An existing node's name, or `new:<index>` for newNodes[index]. */
  readonly nodeName: string;
}

export interface UnschedulablePod {
  readonly pod: Pod;
  /** A sentence saying why, e.g. "no node has 2 cpu free", "anti-affinity with default/web-1". */
  readonly reason: string;
}

export interface SimulationResult {
  /** True when every requested pod found a place. */
  readonly allScheduled: boolean;
  readonly placements: readonly Placement[];
  readonly newNodes: readonly NewNodePlan[];
  readonly unschedulable: readonly UnschedulablePod[];
}

export interface Simulator {
  simulate(request: SimulationRequest): SimulationResult;
}
