// Domain counts of one simulation kept up to date as pods are placed, so that the per-pod work does not
// grow with the number of pods already placed (a multi-node simulation places tens of thousands).
//
// For every (selector, topology key, mode, eligible nodes) a pod asks about, a tracker holds the change
// against the cluster's base counts (topology.ts): minus the matching pods on excluded nodes and the
// matching pods being moved (both fixed for the simulation, counted once when the tracker is made),
// plus the matching pods placed on existing nodes (added as they are placed). Pods placed on new nodes
// are kept per new node and turned into domains each time they are asked for, because a new node's
// domain (its zone ...) may still narrow as later pods land on it; there are few new nodes, so this
// stays cheap. The result is, domain for domain, what topology.ts `domainDelta` recounts from scratch
// (a test compares both on random placements).
//
// The same goes for the anti-affinity terms of placed pods: they are filed by selector, so the terms
// that repel an incoming pod are found without looking at every placed pod.
import type { Labels } from '../model/types.ts';
import type { MatchSet } from './podIndex.ts';
import type { AntiGroup, CallView, DomainDelta, NewNodeDomains, PlacedPod, SpreadBase } from './topology.ts';

type Mode = 'count' | 'block';

const bump = (map: Map<string, number>, key: string, by: number): void => {
  map.set(key, (map.get(key) ?? 0) + by);
};

const pairKey = (key: string, value: string): string => `${key}\u0000${value}`;

// Labels objects are immutable and the same pods are placed in simulation after simulation (a multi-node
// search tries many prefixes of one candidate list): their label pairs are worked out once.
const pairKeysOfLabels = new WeakMap<Labels, readonly string[]>();

export function labelPairKeys(labels: Labels): readonly string[] {
  let keys = pairKeysOfLabels.get(labels);
  if (!keys) {
    const list: string[] = [];
    for (const key in labels) if (Object.hasOwn(labels, key)) list.push(pairKey(key, labels[key]!));
    keys = list;
    pairKeysOfLabels.set(labels, keys);
  }
  return keys;
}

/** Counts of existing nodes plus a small overlay for new nodes, read as one map (never written). */
class LayeredCounts implements ReadonlyMap<string, number> {
  constructor(
    private readonly base: ReadonlyMap<string, number>,
    private readonly overlay: ReadonlyMap<string, number>,
  ) {}

  get size(): number {
    let size = this.base.size;
    for (const key of this.overlay.keys()) if (!this.base.has(key)) size++;
    return size;
  }

  get(key: string): number | undefined {
    const a = this.base.get(key);
    const b = this.overlay.get(key);
    return a === undefined ? b : b === undefined ? a : a + b;
  }

  has(key: string): boolean {
    return this.base.has(key) || this.overlay.has(key);
  }

  *entries(): MapIterator<[string, number]> {
    for (const [key, value] of this.base) yield [key, value + (this.overlay.get(key) ?? 0)];
    for (const [key, value] of this.overlay) if (!this.base.has(key)) yield [key, value];
  }

  *keys(): MapIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<number> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): MapIterator<[string, number]> {
    return this.entries();
  }

  forEach(callback: (value: number, key: string, map: ReadonlyMap<string, number>) => void): void {
    for (const [key, value] of this.entries()) callback(value, key, this);
  }
}

interface Tracker {
  readonly key: string;
  readonly mode: Mode;
  readonly eligible: Uint8Array | undefined;
  /** Change on existing nodes' domains. */
  readonly onExisting: Map<string, number>;
  /** Matching pods placed on each new node. */
  readonly onNew: Map<NewNodeDomains, number>;
}

/** A placed pod's anti-affinity term, with its place in the order the pods were placed. */
interface TermEntry {
  readonly seq: number;
  readonly term: number;
  readonly placed: PlacedPod;
  readonly key: string;
}

/**
 * Match sets filed under the first label pair of their selector's matchLabels, so that a pod's own
 * labels find the sets that may match it; sets without matchLabels are always tested.
 */
class SetIndex<V> {
  private readonly byPair = new Map<string, MatchSet[]>();
  private readonly unfiled: MatchSet[] = [];
  readonly values = new Map<MatchSet, V>();

  add(set: MatchSet, value: V): void {
    this.values.set(set, value);
    const first = Object.entries(set.selector?.matchLabels ?? {})[0];
    if (!first) this.unfiled.push(set);
    else {
      const key = pairKey(first[0], first[1]);
      const list = this.byPair.get(key);
      if (list) list.push(set);
      else this.byPair.set(key, [set]);
    }
  }

  /** The values of the sets matching a pod (`pairs`: its labels' pair keys, when known). */
  matching(namespace: string, labels: Labels, visit: (value: V) => void, pairs?: readonly string[]): void {
    if (this.byPair.size > 0) {
      for (const pair of pairs ?? labelPairKeys(labels)) {
        const sets = this.byPair.get(pair);
        if (!sets) continue;
        for (const set of sets) if (set.matches(namespace, labels)) visit(this.values.get(set)!);
      }
    }
    for (const set of this.unfiled) if (set.matches(namespace, labels)) visit(this.values.get(set)!);
  }
}

/** Spread domains of existing nodes that stay in this simulation, smallest base count first. */
export interface StaticSpreadDomains {
  readonly domains: ReadonlySet<string>;
  readonly byCount: readonly string[];
}

export class CallCounts {
  private readonly excludedAlive: Uint8Array;
  private readonly trackers = new SetIndex<Tracker[]>();
  private readonly groupDeltas = new Map<AntiGroup, DomainDelta>();
  private readonly terms = new SetIndex<TermEntry[]>();
  /** Placed pods (their index in `view.placed`) by label pair. */
  private readonly placedByPair = new Map<string, number[]>();
  private readonly spreadDomainsCache = new Map<SpreadBase, StaticSpreadDomains>();
  private readonly excludedByKey = new Map<string, Map<string, number>>();

  constructor(
    private readonly view: CallView,
    nodeCount: number,
  ) {
    this.excludedAlive = new Uint8Array(nodeCount);
    for (const i of view.excludedAlive) this.excludedAlive[i] = 1;
  }

  /** To be called once the pod has been appended to `view.placed`. */
  placed(placed: PlacedPod): void {
    const seq = this.view.placed.length - 1;
    const { namespace, labels } = placed.pod;
    const pairs = placed.labelPairs ?? labelPairKeys(labels);
    for (const k of pairs) {
      const list = this.placedByPair.get(k);
      if (list) list.push(seq);
      else this.placedByPair.set(k, [seq]);
    }
    this.trackers.matching(
      namespace,
      labels,
      (trackers) => {
        for (const tracker of trackers) this.add(tracker, placed);
      },
      pairs,
    );
    placed.antiTerms.forEach((term, index) => {
      const entry: TermEntry = { seq, term: index, placed, key: term.key };
      const list = this.terms.values.get(term.matchSet);
      if (list) list.push(entry);
      else this.terms.add(term.matchSet, [entry]);
    });
  }

  /** The change against the base counts of `matchSet` for `key` (see topology.ts domainDelta). */
  delta(matchSet: MatchSet, key: string, mode: Mode, eligible?: Uint8Array): DomainDelta {
    let trackers = this.trackers.values.get(matchSet);
    if (!trackers) {
      trackers = [];
      this.trackers.add(matchSet, trackers);
    }
    let tracker = trackers.find((t) => t.key === key && t.mode === mode && t.eligible === eligible);
    if (!tracker) {
      tracker = this.makeTracker(matchSet, key, mode, eligible);
      trackers.push(tracker);
    }
    return this.read(tracker);
  }

  /** The change against an anti-affinity group's holder counts (placed holders are checked apart). */
  groupDelta(group: AntiGroup): DomainDelta {
    let delta = this.groupDeltas.get(group);
    if (!delta) {
      const byDomain = new Map<string, number>();
      this.subtractExcluded(byDomain, group.holderNodeCounts, group.key, undefined);
      for (const removed of this.view.removed) {
        if (removed.topologyIndex === undefined || !group.holders.has(removed.topologyIndex)) continue;
        const domain = this.view.nodeLabel(removed.nodeIndex, group.key);
        if (domain !== undefined) bump(byDomain, domain, -1);
      }
      delta = { byDomain, undetermined: 0 };
      this.groupDeltas.set(group, delta);
    }
    return delta;
  }

  /** Placed pods whose anti-affinity terms select this pod, in the order they were placed (then term order). */
  repellingTerms(namespace: string, labels: Labels, pairs?: readonly string[]): { placed: PlacedPod; key: string }[] {
    const found: TermEntry[] = [];
    this.terms.matching(
      namespace,
      labels,
      (entries) => {
        for (const entry of entries) found.push(entry);
      },
      pairs,
    );
    if (found.length === 0) return [];
    found.sort((a, b) => a.seq - b.seq || a.term - b.term);
    return found.map(({ placed, key }) => ({ placed, key }));
  }

  /**
   * Domains of a spread constraint's eligible existing nodes that still have a node in this simulation,
   * with the same domains sorted by base count (smallest first) for the minimum.
   */
  spreadDomains(base: SpreadBase, key: string): StaticSpreadDomains {
    let cached = this.spreadDomainsCache.get(base);
    if (!cached) {
      // A domain with more nodes than the simulation excludes there keeps one whatever the constraint's
      // eligibility: only the others need the eligible excluded nodes counted (zones never do, and a
      // merge of thousands of nodes asked this for every spread constraint of its pods).
      const excludedHere = this.excludedByDomain(key);
      const domains = new Set<string>();
      let atRisk = false;
      for (const [domain, nodes] of base.domainNodes) {
        if (nodes > (excludedHere.get(domain) ?? 0)) domains.add(domain);
        else atRisk = true;
      }
      if (atRisk) {
        const lostNodes = new Map<string, number>();
        for (const nodeIndex of this.view.excludedAlive) {
          if (!base.eligible[nodeIndex]) continue;
          bump(lostNodes, this.view.nodeLabel(nodeIndex, key)!, 1);
        }
        for (const [domain, nodes] of base.domainNodes) if (nodes - (lostNodes.get(domain) ?? 0) > 0) domains.add(domain);
      }
      const matches = base.domainMatches;
      const byCount = [...domains].sort((a, b) => (matches.get(a) ?? 0) - (matches.get(b) ?? 0));
      cached = { domains, byCount };
      this.spreadDomainsCache.set(base, cached);
    }
    return cached;
  }

  /** Excluded nodes that are not deleting, counted per value of `key` (once per key and simulation). */
  private excludedByDomain(key: string): ReadonlyMap<string, number> {
    let counts = this.excludedByKey.get(key);
    if (!counts) {
      counts = new Map();
      for (const nodeIndex of this.view.excludedAlive) {
        const domain = this.view.nodeLabel(nodeIndex, key);
        if (domain !== undefined) bump(counts, domain, 1);
      }
      this.excludedByKey.set(key, counts);
    }
    return counts;
  }

  private makeTracker(matchSet: MatchSet, key: string, mode: Mode, eligible: Uint8Array | undefined): Tracker {
    const tracker: Tracker = { key, mode, eligible, onExisting: new Map(), onNew: new Map() };
    this.subtractExcluded(tracker.onExisting, matchSet.nodeCounts(), key, eligible);
    for (const removed of this.view.removed) {
      if (eligible && !eligible[removed.nodeIndex]) continue;
      if (removed.topologyIndex === undefined || !matchSet.matches(removed.pod.namespace, removed.pod.labels)) continue;
      const domain = this.view.nodeLabel(removed.nodeIndex, key);
      if (domain !== undefined) bump(tracker.onExisting, domain, -1);
    }
    // Pods placed before this tracker existed: the smallest list of placed pods the selector allows.
    const placed = this.view.placed;
    let candidates: readonly number[] | undefined;
    for (const [k, v] of Object.entries(matchSet.selector?.matchLabels ?? {})) {
      const list = this.placedByPair.get(pairKey(k, v)) ?? [];
      if (!candidates || list.length < candidates.length) candidates = list;
    }
    const count = candidates ? candidates.length : placed.length;
    for (let k = 0; k < count; k++) {
      const p = placed[candidates ? candidates[k]! : k]!;
      if (matchSet.matches(p.pod.namespace, p.pod.labels)) this.add(tracker, p);
    }
    return tracker;
  }

  /** Matching pods on excluded nodes no longer count: walks whichever of the two lists is shorter. */
  private subtractExcluded(
    byDomain: Map<string, number>,
    nodeCounts: ReadonlyMap<number, number>,
    key: string,
    eligible: Uint8Array | undefined,
  ): void {
    if (nodeCounts.size <= this.view.excludedAlive.length) {
      for (const [nodeIndex, count] of nodeCounts) if (this.excludedAlive[nodeIndex]) this.take(byDomain, nodeIndex, count, key, eligible);
    } else {
      for (const nodeIndex of this.view.excludedAlive) this.take(byDomain, nodeIndex, nodeCounts.get(nodeIndex) ?? 0, key, eligible);
    }
  }

  private take(byDomain: Map<string, number>, nodeIndex: number, count: number, key: string, eligible: Uint8Array | undefined): void {
    if (count === 0 || (eligible && !eligible[nodeIndex])) return;
    const domain = this.view.nodeLabel(nodeIndex, key);
    if (domain !== undefined) bump(byDomain, domain, -count);
  }

  private add(tracker: Tracker, placed: PlacedPod): void {
    if (placed.nodeIndex !== undefined) {
      if (tracker.eligible && !tracker.eligible[placed.nodeIndex]) return;
      const domain = this.view.nodeLabel(placed.nodeIndex, tracker.key);
      if (domain !== undefined) bump(tracker.onExisting, domain, 1);
      return;
    }
    const node = placed.newNode!;
    tracker.onNew.set(node, (tracker.onNew.get(node) ?? 0) + 1);
  }

  /** The tracker as a delta; new nodes' pods counted where their node's domain now stands. */
  private read(tracker: Tracker): DomainDelta {
    if (tracker.onNew.size === 0) return { byDomain: tracker.onExisting, undetermined: 0 };
    const overlay = new Map<string, number>();
    let undetermined = 0;
    for (const [node, count] of tracker.onNew) {
      const values = node.domainValues(tracker.key);
      if (values && values.length === 1) bump(overlay, values[0]!, count);
      else if (tracker.mode === 'block' && values) for (const value of values) bump(overlay, value, count);
      else undetermined += count;
    }
    return { byDomain: new LayeredCounts(tracker.onExisting, overlay), undetermined };
  }
}
