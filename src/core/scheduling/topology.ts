// Topology domain counting for pod affinity, anti-affinity and topology spread.
//
// The base counts come from the cluster as it is (cached per selector, see podIndex.ts) and never
// change. A simulation adjusts them with a small delta per constraint: minus the pods on excluded
// nodes and the pods being moved, plus the pods it has placed so far. New nodes whose domain for a key
// is not decided yet (a zone still open) count, like Karpenter does, in every possible domain when
// they repel pods (anti-affinity) and in none when they attract or spread them.
import type { Labels, Pod, PodAffinityTerm, TopologySpreadConstraint } from '../model/types.ts';
import type { ExistingNode } from './existingNodes.ts';
import { labelValue } from './labelSelector.ts';
import { matchSetSignature, type MatchSet, type Namespaces, type PodIndex } from './podIndex.ts';

/** A pod placed earlier in the same simulation. */
export interface PlacedPod {
  readonly pod: Pod;
  /** The placed pod's own anti-affinity terms (they repel later pods too). */
  readonly antiTerms: readonly TermInfo[];
  /** Existing node index, or undefined when on a new node. */
  readonly nodeIndex: number | undefined;
  /** That existing node's labels. */
  readonly nodeLabels: Labels | undefined;
  readonly newNode: NewNodeDomains | undefined;
  /** The pod's labels as the pair keys topology counts file them under, when already worked out. */
  readonly labelPairs?: readonly string[];
}

/** What topology needs to know of a new node. */
export interface NewNodeDomains {
  readonly hostname: string;
  /** Values the node may still take for `key`; undefined when open-ended or unknown. */
  domainValues(key: string): readonly string[] | undefined;
}

/** A pod being moved away from a node that stays: it no longer counts where it is. */
export interface RemovedPod {
  readonly pod: Pod;
  readonly nodeIndex: number;
  /** Its index in the topology pod index, when it counted there. */
  readonly topologyIndex: number | undefined;
}

/** What a delta is computed against (the per-call overlay). */
export interface CallView {
  readonly excludedAlive: readonly number[];
  readonly removed: readonly RemovedPod[];
  readonly placed: readonly PlacedPod[];
  nodeLabel(nodeIndex: number, key: string): string | undefined;
}

export interface TermInfo {
  readonly term: PodAffinityTerm;
  readonly key: string;
  readonly matchSet: MatchSet;
}

/** Existing pods' anti-affinity terms, grouped by (term, namespaces): the pods they repel and where they are. */
export interface AntiGroup {
  readonly matchSet: MatchSet;
  readonly key: string;
  readonly holders: ReadonlySet<number>;
  readonly holderNodeCounts: ReadonlyMap<number, number>;
  /** Holders per domain of `key`. */
  readonly domainCounts: ReadonlyMap<string, number>;
}

export interface SpreadInfo {
  readonly constraint: TopologySpreadConstraint;
  readonly key: string;
  readonly maxSkew: number;
  readonly minDomains: number;
  readonly matchSet: MatchSet;
  /** The incoming pod matches its own selector, so placing it adds one. */
  readonly selfMatch: boolean;
  readonly honorAffinity: boolean;
  readonly honorTaints: boolean;
  base(): SpreadBase;
  /** Domains a new node of the pool would add (cached per pool). */
  poolDomains(poolName: string): readonly string[];
}

/** Eligible existing nodes of a spread constraint and the counts over them (cluster as it is). */
export interface SpreadBase {
  readonly eligible: Uint8Array;
  readonly domainNodes: ReadonlyMap<string, number>;
  readonly domainMatches: ReadonlyMap<string, number>;
}

export interface DomainDelta {
  readonly byDomain: ReadonlyMap<string, number>;
  /** Matching pods on new nodes whose domain is undecided (they exist, somewhere). */
  readonly undetermined: number;
}

interface DeltaSource {
  countOn(nodeIndex: number): number;
  includesRemoved(removed: RemovedPod): boolean;
  includesPlaced(placed: PlacedPod): boolean;
}

const bump = (map: Map<string, number>, key: string, by: number): void => {
  map.set(key, (map.get(key) ?? 0) + by);
};

/**
 * The change against the base counts for `key`, recounted from scratch. `block` mode spreads an
 * undecided new node over all its possible domains (anti-affinity); `count` mode counts it only once
 * decided. A simulation keeps the same counts incrementally (callCounts.ts); this plain recount is
 * their definition, and the test that checks them uses it.
 */
export function domainDelta(
  view: CallView,
  key: string,
  source: DeltaSource,
  mode: 'count' | 'block',
  eligible?: Uint8Array,
): DomainDelta {
  const delta = { byDomain: new Map<string, number>(), undetermined: 0 };
  for (const nodeIndex of view.excludedAlive) {
    if (eligible && !eligible[nodeIndex]) continue;
    const count = source.countOn(nodeIndex);
    if (count === 0) continue;
    const domain = view.nodeLabel(nodeIndex, key);
    if (domain !== undefined) bump(delta.byDomain, domain, -count);
  }
  for (const removed of view.removed) {
    if (eligible && !eligible[removed.nodeIndex]) continue;
    if (!source.includesRemoved(removed)) continue;
    const domain = view.nodeLabel(removed.nodeIndex, key);
    if (domain !== undefined) bump(delta.byDomain, domain, -1);
  }
  for (const placed of view.placed) {
    if (placed.nodeIndex !== undefined && eligible && !eligible[placed.nodeIndex]) continue;
    if (!source.includesPlaced(placed)) continue;
    if (placed.nodeIndex !== undefined) {
      const domain = view.nodeLabel(placed.nodeIndex, key);
      if (domain !== undefined) bump(delta.byDomain, domain, 1);
      continue;
    }
    const values = placed.newNode!.domainValues(key);
    if (values && values.length === 1) bump(delta.byDomain, values[0]!, 1);
    else if (mode === 'block' && values) for (const value of values) bump(delta.byDomain, value, 1);
    else delta.undetermined += 1;
  }
  return delta;
}

/** Delta source for pods a match set selects. */
export function matchSetSource(matchSet: MatchSet): DeltaSource {
  const counts = matchSet.nodeCounts();
  return {
    countOn: (nodeIndex) => counts.get(nodeIndex) ?? 0,
    includesRemoved: (removed) => removed.topologyIndex !== undefined && matchSet.matches(removed.pod.namespace, removed.pod.labels),
    includesPlaced: (placed) => matchSet.matches(placed.pod.namespace, placed.pod.labels),
  };
}

/** Delta source for the holders of an anti-affinity group (placed holders are checked directly). */
export function antiGroupSource(group: AntiGroup): DeltaSource {
  return {
    countOn: (nodeIndex) => group.holderNodeCounts.get(nodeIndex) ?? 0,
    includesRemoved: (removed) => removed.topologyIndex !== undefined && group.holders.has(removed.topologyIndex),
    includesPlaced: () => false,
  };
}

export const countIn = (base: ReadonlyMap<string, number>, delta: DomainDelta, domain: string): number =>
  (base.get(domain) ?? 0) + (delta.byDomain.get(domain) ?? 0);

/** Groups the anti-affinity terms of every counted pod, once per simulator. */
export function buildAntiGroups(index: PodIndex, namespaces: Namespaces): AntiGroup[] {
  const bySignature = new Map<string, LazyAntiGroup>();
  const { pods } = index;
  // Only the pods with anti-affinity terms, in the index's order (a pass builds this for every rebuild
  // of the simulation, and most pods have none).
  for (const podIndex of index.antiAffinityHolders()) {
    const pod = pods[podIndex]!;
    const terms = pod.podAntiAffinity;
    for (let t = 0; t < terms.length; t++) {
      const term = terms[t]!;
      // The group's signature without building its match set: a pass rebuilds the simulation about 50
      // times, and most pods of a dump hold the same few terms.
      const signature = groupSignature(term, pod.namespace, namespaces);
      let group = bySignature.get(signature);
      if (!group) {
        group = new LazyAntiGroup(index.matchSet(term.labelSelector, namespaces.ofTerm(term, pod.namespace)), term.topologyKey, index);
        bySignature.set(signature, group);
      }
      group.members.push(podIndex);
    }
  }
  return [...bySignature.values()];
}

/**
 * A group whose holders are counted (per node, per domain) only when a simulation first asks: a
 * simulator reads the groups whose selectors match a pod it places, often a few of many, and a pass
 * builds a simulator for every decision. The counts are made from the holders in the index's order,
 * as counting them up front would.
 */
class LazyAntiGroup implements AntiGroup {
  /** Holder positions, in the index's order, once per term of the group a holder has. */
  readonly members: number[] = [];
  private counted?: { holders: Set<number>; holderNodeCounts: Map<number, number>; domainCounts: Map<string, number> };

  constructor(
    readonly matchSet: MatchSet,
    readonly key: string,
    private readonly index: PodIndex,
  ) {}

  get holders(): ReadonlySet<number> {
    return this.counts().holders;
  }

  get holderNodeCounts(): ReadonlyMap<number, number> {
    return this.counts().holderNodeCounts;
  }

  get domainCounts(): ReadonlyMap<string, number> {
    return this.counts().domainCounts;
  }

  private counts() {
    if (!this.counted) {
      const holders = new Set<number>();
      const holderNodeCounts = new Map<number, number>();
      const domainCounts = new Map<string, number>();
      for (const podIndex of this.members) {
        const nodeIndex = this.index.nodeOf[podIndex]!;
        holders.add(podIndex);
        holderNodeCounts.set(nodeIndex, (holderNodeCounts.get(nodeIndex) ?? 0) + 1);
        const domain = this.index.nodeLabel(nodeIndex, this.key);
        if (domain !== undefined) bump(domainCounts, domain, 1);
      }
      this.counted = { holders, holderNodeCounts, domainCounts };
    }
    return this.counted;
  }
}

/** Per term: the owning pod's namespace and the term's group signature (topology key, selector, namespaces). */
const groupSignatures = new WeakMap<PodAffinityTerm, { readonly namespace: string; readonly signature: string }>();

function groupSignature(term: PodAffinityTerm, namespace: string, namespaces: Namespaces): string {
  const known = groupSignatures.get(term);
  if (known && known.namespace === namespace) return known.signature;
  const signature = `${term.topologyKey}#${matchSetSignature(term.labelSelector, namespaces.ofTerm(term, namespace))}`;
  groupSignatures.set(term, { namespace, signature });
  return signature;
}

/**
 * Finds the anti-affinity groups whose selector matches a pod without testing every group: a group
 * with matchLabels is filed under one of its label pairs, the others are always tested.
 */
export class AntiGroupIndex {
  private readonly byLabel = new Map<string, AntiGroup[]>();
  private readonly unfiled: AntiGroup[] = [];

  constructor(groups: readonly AntiGroup[]) {
    for (const group of groups) {
      const first = Object.entries(group.matchSet.selector?.matchLabels ?? {})[0];
      if (!first) {
        this.unfiled.push(group);
        continue;
      }
      const key = `${first[0]}=${first[1]}`;
      const list = this.byLabel.get(key);
      if (list) list.push(group);
      else this.byLabel.set(key, [group]);
    }
  }

  matching(pod: Pod): AntiGroup[] {
    const out: AntiGroup[] = [];
    if (this.byLabel.size > 0) {
      for (const [key, value] of Object.entries(pod.labels)) {
        for (const group of this.byLabel.get(`${key}=${value}`) ?? []) {
          if (group.matchSet.matches(pod.namespace, pod.labels)) out.push(group);
        }
      }
    }
    for (const group of this.unfiled) if (group.matchSet.matches(pod.namespace, pod.labels)) out.push(group);
    return out;
  }
}

/** Eligible nodes and counts of one spread constraint over the cluster as it is. */
export function buildSpreadBase(
  nodes: readonly ExistingNode[],
  matchSet: MatchSet,
  key: string,
  isEligible: (node: ExistingNode) => boolean,
): SpreadBase {
  return spreadBaseOn(spreadNodes(nodes, key, isEligible), matchSet);
}

/**
 * The part of a spread base that does not depend on the constraint's selector: which nodes are eligible
 * and their domains. Constraints with the same key, node-affinity and taint policies share it (a
 * workload per zone-spread Deployment made this a walk over every node's labels per Deployment).
 */
export interface SpreadNodes {
  readonly eligible: Uint8Array;
  readonly domainNodes: ReadonlyMap<string, number>;
  /** Each eligible node's domain, by node index. */
  readonly domainOf: readonly (string | undefined)[];
}

export function spreadNodes(nodes: readonly ExistingNode[], key: string, isEligible: (node: ExistingNode) => boolean): SpreadNodes {
  const eligible = new Uint8Array(nodes.length);
  const domainNodes = new Map<string, number>();
  const domainOf: (string | undefined)[] = new Array(nodes.length).fill(undefined);
  for (const node of nodes) {
    if (!node.alive) continue;
    const domain = labelValue(node.labels, key);
    if (domain === undefined || !isEligible(node)) continue;
    eligible[node.index] = 1;
    domainOf[node.index] = domain;
    bump(domainNodes, domain, 1);
  }
  return { eligible, domainNodes, domainOf };
}

/** A spread base from its nodes' part and the pods its selector matches. */
export function spreadBaseOn(part: SpreadNodes, matchSet: MatchSet): SpreadBase {
  const domainMatches = new Map<string, number>();
  for (const [nodeIndex, count] of matchSet.nodeCounts()) {
    if (!part.eligible[nodeIndex]) continue;
    bump(domainMatches, part.domainOf[nodeIndex]!, count);
  }
  return { eligible: part.eligible, domainNodes: part.domainNodes, domainMatches };
}
