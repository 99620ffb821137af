// An index of the pods that count for pod affinity, anti-affinity and topology spread, built once per
// simulator: by node, by namespace and by label, so a selector is evaluated against a few candidate
// pods instead of all of them. `MatchSet`s (selector x namespaces) are cached: replicas of one
// workload share them, and so do the thousands of simulations of one disruption pass.
import type { LabelSelector, Labels, Namespace, Pod, PodAffinityTerm } from '../model/types.ts';
import { labelValue, matchesSelector, selectorSignature, selectsEverything } from './labelSelector.ts';

/** Which namespaces an affinity term (or spread constraint) looks at. */
export interface NamespaceScope {
  readonly signature: string;
  has(namespace: string): boolean;
  /** The explicit list when the scope is a finite, known list (lets the index start from it). */
  readonly listed?: readonly string[];
}

export class Namespaces {
  private readonly labelsByName = new Map<string, Labels>();
  private readonly scopes = new Map<string, NamespaceScope>();
  private readonly single = new Map<string, NamespaceScope>();

  constructor(namespaces: readonly Namespace[]) {
    for (const namespace of namespaces) this.labelsByName.set(namespace.name, namespace.labels);
  }

  /** Every namespace carries `kubernetes.io/metadata.name` (set by the API server), listed or not. */
  labelsOf(name: string): Labels {
    return { ...(this.labelsByName.get(name) ?? {}), 'kubernetes.io/metadata.name': name };
  }

  listed(names: readonly string[]): NamespaceScope {
    // One namespace (a pod's own, the usual case, asked for every pod a simulation prepares): by name.
    if (names.length === 1) {
      const name = names[0]!;
      let scope = this.single.get(name);
      if (!scope) {
        scope = this.listedMany([name]);
        this.single.set(name, scope);
      }
      return scope;
    }
    return this.listedMany(names);
  }

  private listedMany(names: readonly string[]): NamespaceScope {
    const sorted = [...new Set(names)].sort();
    const signature = `ns:${sorted.join(',')}`;
    return this.cached(signature, () => {
      const set = new Set(sorted);
      return { signature, listed: sorted, has: (namespace) => set.has(namespace) };
    });
  }

  /**
   * Kubernetes' rule for a pod affinity term: `namespaces` united with the namespaces its
   * `namespaceSelector` selects (`{}` selects all); neither given means the owning pod's namespace.
   */
  ofTerm(term: PodAffinityTerm, ownNamespace: string): NamespaceScope {
    if (term.namespaceSelector === undefined) {
      return this.listed(term.namespaces.length > 0 ? term.namespaces : [ownNamespace]);
    }
    if (selectsEverything(term.namespaceSelector)) return this.cached('ns:*', () => ({ signature: 'ns:*', has: () => true }));
    const selector = term.namespaceSelector;
    const names = new Set(term.namespaces);
    const signature = `ns:${[...names].sort().join(',')}+${selectorSignature(selector)}`;
    return this.cached(signature, () => {
      const verdicts = new Map<string, boolean>();
      return {
        signature,
        has: (namespace) => {
          if (names.has(namespace)) return true;
          let verdict = verdicts.get(namespace);
          if (verdict === undefined) {
            verdict = matchesSelector(selector, this.labelsOf(namespace));
            verdicts.set(namespace, verdict);
          }
          return verdict;
        },
      };
    });
  }

  private cached(signature: string, make: () => NamespaceScope): NamespaceScope {
    let scope = this.scopes.get(signature);
    if (!scope) {
      scope = make();
      this.scopes.set(signature, scope);
    }
    return scope;
  }
}

/** The pods a (selector, namespaces) pair matches, counted per node. */
export class MatchSet {
  private counts?: Map<number, number>;
  private matched?: number[];
  private readonly domainCache = new Map<string, { byDomain: Map<string, number>; total: number }>();

  constructor(
    private readonly index: PodIndex,
    readonly selector: LabelSelector | undefined,
    readonly namespaces: NamespaceScope,
    readonly signature: string,
  ) {}

  matches(namespace: string, labels: Labels): boolean {
    return this.namespaces.has(namespace) && matchesSelector(this.selector, labels);
  }

  /** The matching pods if worked out already (what a derived index starts from, PodIndexSeed). */
  get computed(): readonly number[] | undefined {
    return this.matched;
  }

  /** Indexes (into the pod index) of matching pods. */
  pods(): readonly number[] {
    if (!this.matched) this.matched = this.index.select(this);
    return this.matched;
  }

  /** Matching pods per node index. */
  nodeCounts(): ReadonlyMap<number, number> {
    if (!this.counts) {
      const counts = new Map<number, number>();
      for (const i of this.pods()) {
        const nodeIndex = this.index.nodeOf[i]!;
        counts.set(nodeIndex, (counts.get(nodeIndex) ?? 0) + 1);
      }
      this.counts = counts;
    }
    return this.counts;
  }

  /** Matching pods per value of `key` on their nodes (nodes lacking the key are left out), and the total. */
  domainCounts(key: string): { readonly byDomain: ReadonlyMap<string, number>; readonly total: number } {
    let cached = this.domainCache.get(key);
    if (!cached) {
      const byDomain = new Map<string, number>();
      let total = 0;
      for (const [nodeIndex, count] of this.nodeCounts()) {
        const domain = this.index.nodeLabel(nodeIndex, key);
        if (domain === undefined) continue;
        byDomain.set(domain, (byDomain.get(domain) ?? 0) + count);
        total += count;
      }
      cached = { byDomain, total };
      this.domainCache.set(key, cached);
    }
    return cached;
  }
}

export class PodIndex {
  /** The pods that count, and (at the same position) the index of the node each is on. */
  readonly pods: readonly Pod[];
  readonly nodeOf: Int32Array;
  /**
   * Positions of the pods on each node, ascending (a uid is looked up on the node the pod is bound to):
   * those of node n are byNode[nodeStart[n]] up to byNode[nodeStart[n + 1]]. Two typed arrays filled by
   * counting, not one array per node: a pass builds this for every simulation it rebuilds.
   */
  private readonly nodeStart: Int32Array;
  private readonly byNode: Int32Array;
  // Built on first use, per label key: a pass asks about the few keys its selectors name, so indexing
  // every label of every pod on each rebuild of the simulation would be wasted.
  private byNamespaceLazy: Map<string, number[]> | undefined;
  private readonly byLabel = new Map<string, Map<string, number[]>>();
  private readonly matchSets = new Map<string, MatchSet>();

  /** Two arrays rather than one object per pod: a pass builds this about 50 times over every pod. */
  constructor(
    pods: readonly Pod[],
    nodeOf: Int32Array,
    private readonly nodeLabels: readonly Labels[],
    /** What the index this one was derived from had worked out (see PodIndexSeed). */
    private readonly seed?: PodIndexSeed,
  ) {
    this.pods = pods;
    this.nodeOf = nodeOf;
    const nodeStart = new Int32Array(nodeLabels.length + 1);
    for (let i = 0; i < pods.length; i++) nodeStart[nodeOf[i]! + 1]! += 1;
    for (let n = 0; n < nodeLabels.length; n++) nodeStart[n + 1]! += nodeStart[n]!;
    const next = nodeStart.slice(0, nodeLabels.length);
    const byNode = new Int32Array(pods.length);
    for (let i = 0; i < pods.length; i++) byNode[next[nodeOf[i]!]!++] = i;
    this.nodeStart = nodeStart;
    this.byNode = byNode;
  }

  private get byNamespace(): Map<string, number[]> {
    if (!this.byNamespaceLazy) {
      const map = new Map<string, number[]>();
      for (let i = 0; i < this.pods.length; i++) push(map, this.pods[i]!.namespace, i);
      this.byNamespaceLazy = map;
    }
    return this.byNamespaceLazy;
  }

  /** Pod positions by value of one label key (pods without the key are not listed). */
  private labelValues(key: string): Map<string, number[]> {
    let values = this.byLabel.get(key);
    if (!values) {
      values = new Map();
      const seeded = this.seed?.byLabel.get(key);
      let from = 0;
      if (seeded && this.seed) {
        // The seed's lists moved to their positions here; only the pods it did not have are read.
        for (const [value, list] of seeded) {
          const moved = this.seed.moved(list);
          if (moved.length > 0) values.set(value, moved);
        }
        from = this.seed.firstNew;
      }
      for (let i = from; i < this.pods.length; i++) {
        const labels = this.pods[i]!.labels;
        if (Object.hasOwn(labels, key)) push(values, labels[key]!, i);
      }
      this.byLabel.set(key, values);
    }
    return values;
  }

  /**
   * The position of `pod` (by uid) in the index, if it counts; `boundTo` is the node the cluster has it
   * bound to (BoundPods), undefined when it is bound nowhere (then it does not count).
   */
  indexOf(pod: Pod, boundTo: number | undefined): number | undefined {
    if (boundTo === undefined || boundTo < 0 || boundTo >= this.nodeLabels.length) return undefined;
    for (let k = this.nodeStart[boundTo]!; k < this.nodeStart[boundTo + 1]!; k++) {
      const i = this.byNode[k]!;
      if (this.pods[i]!.uid === pod.uid) return i;
    }
    return undefined;
  }

  nodeLabel(nodeIndex: number, key: string): string | undefined {
    return labelValue(this.nodeLabels[nodeIndex]!, key);
  }

  matchSet(selector: LabelSelector | undefined, namespaces: NamespaceScope): MatchSet {
    const signature = matchSetSignature(selector, namespaces);
    let set = this.matchSets.get(signature);
    if (!set) {
      set = new MatchSet(this, selector, namespaces, signature);
      this.matchSets.set(signature, set);
    }
    return set;
  }

  /** Evaluates the selector on the smallest candidate list the index offers. */
  select(set: MatchSet): number[] {
    if (set.selector === undefined) return [];
    // A value named twice in an `In` tests its pods twice above (and lists them twice): not seeded.
    const seeded = repeatsAValue(set.selector) ? undefined : this.seed?.matched.get(set.signature);
    if (seeded && this.seed) {
      const matched = this.seed.moved(seeded.pods);
      for (let i = this.seed.firstNew; i < this.pods.length; i++) {
        const pod = this.pods[i]!;
        if (set.matches(pod.namespace, pod.labels)) matched.push(i);
      }
      return matched;
    }
    // Each candidate is a union of posting lists; only the smallest one is materialised.
    let best: (readonly number[])[] | undefined;
    let bestSize = Number.POSITIVE_INFINITY;
    const consider = (lists: (readonly number[])[]): void => {
      let size = 0;
      for (const list of lists) size += list.length;
      if (size < bestSize) {
        best = lists;
        bestSize = size;
      }
    };
    for (const [key, value] of Object.entries(set.selector.matchLabels ?? {})) {
      consider([this.labelValues(key).get(value) ?? []]);
    }
    for (const expression of set.selector.matchExpressions ?? []) {
      if (expression.operator !== 'In' && expression.operator !== 'Exists') continue;
      const values = this.labelValues(expression.key);
      if (expression.operator === 'In') consider((expression.values ?? []).map((v) => values.get(v) ?? []));
      else consider([...values.values()]);
    }
    // The namespace lists are built over every pod on first use: worth it only when the labels leave a
    // long list (the result is the same either way: every candidate is tested in full).
    if (set.namespaces.listed && bestSize > NAMESPACE_LIST_WORTH) consider(set.namespaces.listed.map((ns) => this.byNamespace.get(ns) ?? []));
    const matched: number[] = [];
    const test = (i: number): void => {
      const pod = this.pods[i]!;
      if (set.matches(pod.namespace, pod.labels)) matched.push(i);
    };
    if (best) for (const list of best) for (const i of list) test(i);
    else for (let i = 0; i < this.pods.length; i++) test(i);
    return matched.sort((a, b) => a - b);
  }

  /** Positions of the pods with pod anti-affinity terms, ascending (what buildAntiGroups reads). */
  antiAffinityHolders(): readonly number[] {
    if (!this.holders) {
      let holders: number[] = [];
      let from = 0;
      if (this.seed?.holders) {
        holders = this.seed.moved(this.seed.holders);
        from = this.seed.firstNew;
      }
      for (let i = from; i < this.pods.length; i++) if (this.pods[i]!.podAntiAffinity.length > 0) holders.push(i);
      this.holders = holders;
    }
    return this.holders;
  }

  private holders: number[] | undefined;

  /**
   * What an index derived from this one may start from: its label lists, match sets and anti-affinity
   * holders as worked out so far, moved to their positions there (`positions`: position here ->
   * position there, -1 for a pod not there; the pods from `firstNew` on there are new). Only data, no
   * reference to this index, so a chain of derived indexes holds at most one earlier one's lists.
   */
  seedFor(positions: Int32Array, firstNew: number): PodIndexSeed {
    // What this index's own seed offers and nothing has asked of it yet is worked out now (moving the
    // seed's lists costs far less than reading every pod's labels), so the next index has it all in one
    // seed. (An index never built, for a cluster only changed again, passes its seed on as it is:
    // PodIndexSeed.composedWith.)
    if (this.seed) {
      for (const key of this.seed.byLabel.keys()) this.labelValues(key);
      for (const entry of this.seed.matched.values()) this.matchSet(entry.selector, entry.namespaces).pods();
      if (this.seed.holders) this.antiAffinityHolders();
    }
    const matched = new Map<string, SeededMatch>();
    for (const [signature, set] of this.matchSets) {
      const computed = set.computed;
      if (computed) matched.set(signature, { selector: set.selector, namespaces: set.namespaces, pods: computed });
    }
    return new PodIndexSeed(positions, firstNew, new Map(this.byLabel), matched, this.holders);
  }
}

/** A match set's pods, with what it matches (a seed holds no reference to the index it came from). */
interface SeededMatch {
  readonly selector: LabelSelector | undefined;
  readonly namespaces: NamespaceScope;
  readonly pods: readonly number[];
}

/**
 * What a derived index (one made by existingNodes.ts deriveIndex from this one's cluster) can reuse.
 * A pod's labels and namespace never change, and the derived index keeps the pods of the base in their
 * order (those that stay, or are copies bound elsewhere, at their new positions) and adds its new pods
 * after them, so each list moved over and completed with the new pods is the list a fresh index makes.
 */
export class PodIndexSeed {
  constructor(
    private readonly positions: Int32Array,
    readonly firstNew: number,
    readonly byLabel: ReadonlyMap<string, ReadonlyMap<string, readonly number[]>>,
    readonly matched: ReadonlyMap<string, SeededMatch>,
    readonly holders: readonly number[] | undefined,
  ) {}

  /**
   * This seed carried one change further, for an index derived from the one this seed is for without
   * that one ever being built (a cluster that is only changed again, like the kube-scheduler check's
   * world between two checks): `positions` and `firstNew` as seedFor takes them. Its lists stay as
   * they are, their positions mapped through both changes, so nothing is worked out for the index in
   * between. The pods that index had and the seed's lists did not (its own new ones) come after the
   * seed's pods there, and keep their order here, so they start the part read afresh.
   */
  composedWith(positions: Int32Array, firstNew: number): PodIndexSeed {
    const composed = new Int32Array(this.positions.length);
    for (let p = 0; p < composed.length; p++) {
      const q = this.positions[p]!;
      composed[p] = q >= 0 ? positions[q]! : -1;
    }
    let first = firstNew;
    for (let q = this.firstNew; q < positions.length; q++) {
      if (positions[q]! >= 0) {
        first = positions[q]!;
        break;
      }
    }
    return new PodIndexSeed(composed, first, this.byLabel, this.matched, this.holders);
  }

  /** Positions of the base moved here, in the same (ascending) order; pods gone are left out. */
  moved(list: readonly number[]): number[] {
    const out: number[] = [];
    for (const p of list) {
      const q = this.positions[p]!;
      if (q >= 0) out.push(q);
    }
    return out;
  }
}

// One index per indexed cluster (existingNodes.ts indexCluster keeps one per cluster object): every
// simulator of that cluster shares its lists, and the next cluster's index is seeded from them.
const podIndexes = new WeakMap<object, PodIndex>();

/** The pod index of an indexed cluster, built on first use (with its seed, when it was derived). */
export function podIndexOf(indexed: object, build: () => PodIndex): PodIndex {
  let index = podIndexes.get(indexed);
  if (!index) {
    index = build();
    podIndexes.set(indexed, index);
  }
  return index;
}

/** The pod index built for `indexed`, if any (the base a derived index is seeded from). */
export function builtPodIndex(indexed: object): PodIndex | undefined {
  return podIndexes.get(indexed);
}

const repeatsAValue = (selector: LabelSelector): boolean =>
  (selector.matchExpressions ?? []).some((e) => e.operator === 'In' && new Set(e.values ?? []).size !== (e.values ?? []).length);

/** What identifies a match set: its selector and its namespaces. */
export const matchSetSignature = (selector: LabelSelector | undefined, namespaces: NamespaceScope): string =>
  `${selectorSignature(selector)}@${namespaces.signature}`;

/** A label-based candidate list longer than this is worth comparing with the namespaces' lists. */
const NAMESPACE_LIST_WORTH = 64;

function push<K>(map: Map<K, number[]>, key: K, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
