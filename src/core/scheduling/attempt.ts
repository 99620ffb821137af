// One attempt to place one pod: its topology constraints turned into domain counts for the cluster as
// this simulation has left it so far (base counts + delta), computed once per pod and then used for
// every candidate node, existing or new.
import { LabelKeys } from '../model/types.ts';
import type { PreparedPod } from './podConstraints.ts';
import { describeDomain, podName, Stage } from './reasons.ts';
import { labelValue } from './labelSelector.ts';
import type { Labels } from '../model/types.ts';
import type { CallCounts } from './callCounts.ts';
import {
  countIn,
  type AntiGroup,
  type CallView,
  type DomainDelta,
  type NewNodeDomains,
  type PlacedPod,
  type SpreadBase,
  type SpreadInfo,
  type TermInfo,
} from './topology.ts';
import type { PodIndex } from './podIndex.ts';

export interface TermView {
  readonly info: TermInfo;
  readonly base: ReadonlyMap<string, number>;
  readonly delta: DomainDelta;
}

export interface SpreadView {
  readonly info: SpreadInfo;
  readonly base: SpreadBase;
  readonly delta: DomainDelta;
  /** Eligible domains (existing, possible new-node domains, opened new nodes). */
  readonly domains: ReadonlySet<string>;
  /** Minimum matching count over `domains` (Infinity when there is none). */
  readonly rawMin: number;
}

export interface RepelView {
  readonly group: AntiGroup;
  readonly delta: DomainDelta;
}

/** A pod placed earlier in this simulation whose anti-affinity term repels the incoming pod. */
export interface PlacedRepel {
  readonly placed: PlacedPod;
  readonly key: string;
}

export interface TopologyAttempt {
  readonly affinity: readonly TermView[];
  readonly antiAffinity: readonly TermView[];
  readonly spread: readonly SpreadView[];
  readonly repel: readonly RepelView[];
  readonly placedRepel: readonly PlacedRepel[];
  /** No pod anywhere matches the pod's affinity terms and the pod matches them itself. */
  readonly firstPodAllowed: boolean;
}

export interface AttemptContext {
  readonly view: CallView;
  /** The simulation's incremental counts (the same simulation as `view`). */
  readonly counts: CallCounts;
  readonly newNodes: readonly NewNodeDomains[];
  /** Pools that may add domains (empty when no new node may be opened). */
  readonly domainPools: readonly string[];
}

/**
 * Undefined when the pod has no topology constraint and nothing placed or existing repels it. The
 * counts come from the simulation's incremental trackers (callCounts.ts), so building an attempt costs
 * about the number of domains involved, not the number of pods placed so far.
 */
export function buildAttempt(p: PreparedPod, ctx: AttemptContext): TopologyAttempt | undefined {
  const { counts } = ctx;
  const placedRepel: PlacedRepel[] = counts.repellingTerms(p.pod.namespace, p.pod.labels, p.labelPairs);
  if (p.affinity.length === 0 && p.antiAffinity.length === 0 && p.spread.length === 0 && p.repelledBy.length === 0 && placedRepel.length === 0) {
    return undefined;
  }
  const affinity = p.affinity.map((info) => termView(info, counts, 'count'));
  let firstPodAllowed = false;
  if (affinity.length > 0 && p.selfAffine) {
    firstPodAllowed = affinity.every((t) => {
      const total = t.info.matchSet.domainCounts(t.info.key).total;
      let delta = t.delta.undetermined;
      for (const value of t.delta.byDomain.values()) delta += value;
      return total + delta <= 0;
    });
  }
  return {
    affinity,
    antiAffinity: p.antiAffinity.map((info) => termView(info, counts, 'block')),
    spread: p.spread.map((info) => spreadView(info, ctx)),
    repel: p.repelledBy.map((group) => ({ group, delta: counts.groupDelta(group) })),
    placedRepel,
    firstPodAllowed,
  };
}

function termView(info: TermInfo, counts: CallCounts, mode: 'count' | 'block'): TermView {
  return { info, base: info.matchSet.domainCounts(info.key).byDomain, delta: counts.delta(info.matchSet, info.key, mode) };
}

/** Domains of existing nodes (fixed for the simulation) plus the few that new nodes may add. */
class SpreadDomains implements ReadonlySet<string> {
  constructor(
    private readonly existing: ReadonlySet<string>,
    /** Domains not among `existing`. */
    readonly extra: ReadonlySet<string>,
  ) {}

  get size(): number {
    return this.existing.size + this.extra.size;
  }

  has(domain: string): boolean {
    return this.existing.has(domain) || this.extra.has(domain);
  }

  *values(): SetIterator<string> {
    yield* this.existing;
    yield* this.extra;
  }

  keys(): SetIterator<string> {
    return this.values();
  }

  *entries(): SetIterator<[string, string]> {
    for (const domain of this.values()) yield [domain, domain];
  }

  [Symbol.iterator](): SetIterator<string> {
    return this.values();
  }

  forEach(callback: (value: string, key: string, set: ReadonlySet<string>) => void): void {
    for (const domain of this.values()) callback(domain, domain, this);
  }
}

function spreadView(info: SpreadInfo, ctx: AttemptContext): SpreadView {
  const base = info.base();
  const delta = ctx.counts.delta(info.matchSet, info.key, 'count', base.eligible);
  const existing = ctx.counts.spreadDomains(base, info.key);
  const extra = new Set<string>();
  for (const pool of ctx.domainPools) for (const domain of info.poolDomains(pool)) if (!existing.domains.has(domain)) extra.add(domain);
  for (const node of ctx.newNodes) {
    const values = info.key === LabelKeys.hostname ? undefined : node.domainValues(info.key);
    const domain = info.key === LabelKeys.hostname ? node.hostname : values && values.length === 1 ? values[0]! : undefined;
    if (domain !== undefined && !existing.domains.has(domain)) extra.add(domain);
  }
  // The minimum over every domain: existing domains the simulation has not changed are sorted by base
  // count, so the first unchanged one is their minimum; the changed ones and the extra ones are few.
  let rawMin = Number.POSITIVE_INFINITY;
  for (const domain of existing.byCount) {
    if ((delta.byDomain.get(domain) ?? 0) !== 0) continue;
    rawMin = base.domainMatches.get(domain) ?? 0;
    break;
  }
  for (const [domain] of delta.byDomain) {
    if (existing.domains.has(domain)) rawMin = Math.min(rawMin, countIn(base.domainMatches, delta, domain));
  }
  for (const domain of extra) rawMin = Math.min(rawMin, countIn(base.domainMatches, delta, domain));
  return { info, base, delta, domains: new SpreadDomains(existing.domains, extra), rawMin };
}

/**
 * The global minimum Kubernetes compares against, when the candidate's domain is `domain` with `count` matches.
 *
 * Hostname spread, a deliberate difference from Karpenter: Karpenter's simulation counts a node it could
 * launch as one more host with zero matching pods, so with maxSkew 1 it never stacks a second matching
 * pod on a host during consolidation. kube-scheduler, which binds the moved pods, counts only the nodes
 * that exist, and does stack them. A plan must hold when kube-scheduler places its pods, so hostname
 * domains here are the existing nodes plus the new nodes this simulation has opened (poolDomains adds
 * none for the hostname key).
 */
export function spreadMin(view: SpreadView, domain: string, count: number): number {
  const known = view.domains.has(domain);
  const size = view.domains.size + (known ? 0 : 1);
  if (size < view.info.minDomains) return 0;
  const min = known ? view.rawMin : Math.min(view.rawMin, count);
  return Number.isFinite(min) ? min : 0;
}

/** Said wherever a hostname spread decides: which hosts count (see spreadMin). */
export const HOSTNAME_DOMAINS = " (hosts counted as kube-scheduler counts them: the existing nodes, not a node Karpenter could launch)";

export interface ExplainContext {
  readonly view: CallView;
  readonly index: PodIndex;
  /** Node labels by existing node index. */
  readonly nodeLabels: readonly Labels[];
  readonly excluded: Uint8Array;
  readonly removedUids: ReadonlySet<string>;
}

/** A pod of `candidates` (topology indexes) or of the placed pods that sits in `domain`, for messages. */
export function podInDomain(
  ctx: ExplainContext,
  candidates: Iterable<number>,
  placedMatches: (placed: PlacedPod) => boolean,
  key: string,
  domain: string,
): string | undefined {
  for (const placed of ctx.view.placed) {
    if (!placedMatches(placed)) continue;
    const values =
      placed.nodeIndex !== undefined ? [ctx.view.nodeLabel(placed.nodeIndex, key)] : placed.newNode!.domainValues(key) ?? [];
    if (values.includes(domain)) return podName(placed.pod);
  }
  for (const i of candidates) {
    const pod = ctx.index.pods[i]!;
    const nodeIndex = ctx.index.nodeOf[i]!;
    if (ctx.excluded[nodeIndex] || ctx.removedUids.has(pod.uid)) continue;
    if (labelValue(ctx.nodeLabels[nodeIndex]!, key) === domain) return podName(pod);
  }
  return undefined;
}

/**
 * Topology checks of an existing node (labels known). Returns the failing stage, or Ok. With
 * `explain`, pushes a sentence describing the failure.
 */
export function checkTopologyOnExisting(
  attempt: TopologyAttempt,
  labels: Labels,
  explain?: { ctx: ExplainContext; out: string[] },
): Stage {
  for (const { group, delta } of attempt.repel) {
    const domain = labelValue(labels, group.key);
    if (domain === undefined) continue;
    if ((group.domainCounts.get(domain) ?? 0) + (delta.byDomain.get(domain) ?? 0) > 0) {
      if (explain) {
        const holder = podInDomain(explain.ctx, group.holders, () => false, group.key, domain);
        explain.out.push(`anti-affinity of pod ${holder ?? 'elsewhere'} rules out ${describeDomain(group.key, domain)}`);
      }
      return Stage.AntiAffinityOfOthers;
    }
  }
  for (const { placed, key } of attempt.placedRepel) {
    const domain = labelValue(labels, key);
    if (domain === undefined) continue;
    const values =
      placed.nodeIndex !== undefined
        ? [labelValue(placed.nodeLabels!, key)]
        : placed.newNode!.domainValues(key) ?? [];
    if (values.includes(domain)) {
      explain?.out.push(`anti-affinity of pod ${podName(placed.pod)} rules out ${describeDomain(key, domain)}`);
      return Stage.AntiAffinityOfOthers;
    }
  }
  for (const term of attempt.antiAffinity) {
    const domain = labelValue(labels, term.info.key);
    if (domain === undefined) continue;
    if (countIn(term.base, term.delta, domain) > 0) {
      if (explain) {
        const other = podInDomain(
          explain.ctx,
          term.info.matchSet.pods(),
          (placed) => term.info.matchSet.matches(placed.pod.namespace, placed.pod.labels),
          term.info.key,
          domain,
        );
        explain.out.push(`anti-affinity with pod ${other ?? 'elsewhere'} in ${describeDomain(term.info.key, domain)}`);
      }
      return Stage.PodAntiAffinity;
    }
  }
  for (const term of attempt.affinity) {
    const domain = labelValue(labels, term.info.key);
    if (domain === undefined) {
      explain?.out.push(`pod affinity needs a node with label ${term.info.key}`);
      return Stage.PodAffinity;
    }
    if (countIn(term.base, term.delta, domain) <= 0 && !attempt.firstPodAllowed) {
      explain?.out.push(`pod affinity: no matching pod in ${describeDomain(term.info.key, domain)}`);
      return Stage.PodAffinity;
    }
  }
  for (const spread of attempt.spread) {
    const domain = labelValue(labels, spread.info.key);
    if (domain === undefined) {
      explain?.out.push(`topology spread needs a node with label ${spread.info.key}`);
      return Stage.TopologySpread;
    }
    const count = countIn(spread.base.domainMatches, spread.delta, domain);
    const skew = count + (spread.info.selfMatch ? 1 : 0) - spreadMin(spread, domain, count);
    if (skew > spread.info.maxSkew) {
      explain?.out.push(
        `topology spread on ${spread.info.key} would reach skew ${skew} > maxSkew ${spread.info.maxSkew} in ${describeDomain(spread.info.key, domain)}${spread.info.key === LabelKeys.hostname ? HOSTNAME_DOMAINS : ''}`,
      );
      return Stage.TopologySpread;
    }
  }
  return Stage.Ok;
}
