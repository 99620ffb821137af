// A new node planned by the simulation. It starts from a NodePool's requirement set and every
// instance type the pool may launch within its limits; each pod that joins narrows the requirements
// (node selector, affinity, volume zone, topology) and keeps only the instance types that can still
// hold all its pods plus daemonset overhead, with the offerings (zone x capacity type) still allowed.
import type { Offering, Requirement } from '../model/types.ts';
import { LabelKeys } from '../model/types.ts';
import { HOSTNAME_DOMAINS, spreadMin, type TopologyAttempt } from './attempt.ts';
import { countIn } from './topology.ts';
import { firstPortConflict, formatPort, type PortUse } from './hostPorts.ts';
import type { TypeCatalog } from './instanceTypes.ts';
import type { PoolInfo, PoolType } from './nodePools.ts';
import type { PreparedPod } from './podConstraints.ts';
import { describeDomain, podName, Stage, volumeHostsSentence } from './reasons.ts';
import {
  allowsValue,
  finiteValues,
  intersectKey,
  isSatisfiable,
  PRESENT,
  toRequirements,
  valuesIn,
  valuesNotIn,
  type KeyRequirement,
} from './requirements.ts';
import { carriesLabel } from './launchedLabels.ts';
import { formatRequests } from './resources.ts';
import { firstUntoleratedTaint, formatTaint } from './taints.ts';
import type { CallView, NewNodeDomains } from './topology.ts';

export interface NodeOption {
  readonly poolType: PoolType;
  /** Offerings still allowed, cheapest first. */
  readonly offerings: readonly Offering[];
}

/** A candidate state of the node with one more pod, not yet committed. */
export interface Draft {
  /** The node's own map until a key changes (setKey copies it then): most pods narrow nothing. */
  requirements: Map<string, KeyRequirement>;
  options: readonly NodeOption[];
  copied: boolean;
}

/** Sets one key of the draft's requirements, copying the node's map on the first change. */
function setKey(draft: Draft, key: string, requirement: KeyRequirement): void {
  if (!draft.copied) {
    draft.requirements = new Map(draft.requirements);
    draft.copied = true;
  }
  draft.requirements.set(key, requirement);
}

/** The failure of the alternative that got furthest, which explains the whole evaluation. */
function furthest(best: Evaluation | undefined, candidate: Evaluation): Evaluation | undefined {
  return !candidate.ok && (best === undefined || (!best.ok && candidate.stage > best.stage)) ? candidate : best;
}

export type Evaluation =
  | { readonly ok: true; readonly draft: Draft }
  | { readonly ok: false; readonly stage: Stage; readonly reason: string };

export class NewNode implements NewNodeDomains {
  readonly hostname: string;
  readonly pods: PreparedPod[] = [];
  requirements: Map<string, KeyRequirement>;
  options: readonly NodeOption[];
  usedCpu = 0;
  usedMemory = 0;
  usedPods = 0;
  /**
   * Room kept free once the node holds a pod (cost-efficient sizing): as much cpu and memory as the
   * largest moved pod asks, so that kube-scheduler, which spreads pods rather than packing them, still
   * finds room for it in whatever order the pods come.
   */
  reserveCpu = 0;
  reserveMemory = 0;

  /** From now on keep room for a pod of this size (see reserveCpu). */
  keepRoomFor(cpuMillis: number, memoryBytes: number): void {
    this.reserveCpu = cpuMillis;
    this.reserveMemory = memoryBytes;
  }
  readonly usedOther = new Map<string, number>();
  readonly ports: PortUse[];
  private readonly domainCache = new Map<string, readonly string[] | undefined>();

  constructor(
    readonly index: number,
    readonly pool: PoolInfo,
    private readonly catalog: TypeCatalog,
    options: readonly NodeOption[],
  ) {
    this.hostname = `new:${index}`;
    this.requirements = new Map(pool.requirements);
    // A placeholder hostname: a pod pinned to an existing node's hostname never matches a new node.
    this.requirements.set(LabelKeys.hostname, valuesIn([this.hostname]));
    this.options = options;
    this.ports = [...pool.daemonPorts];
  }

  domainValues(key: string): readonly string[] | undefined {
    if (!this.domainCache.has(key)) {
      this.domainCache.set(key, possibleValues(this.catalog, this.hostname, this.requirements, this.options, key));
    }
    return this.domainCache.get(key);
  }

  commit(p: PreparedPod, draft: Draft): void {
    this.pods.push(p);
    this.requirements = draft.requirements;
    this.options = draft.options;
    this.usedCpu += p.cpu;
    this.usedMemory += p.memory;
    this.usedPods += 1;
    for (const [key, value] of p.other) this.usedOther.set(key, (this.usedOther.get(key) ?? 0) + value);
    this.ports.push(...p.ports);
    this.domainCache.clear();
  }

  /** Whether pod `p` can join, and the narrowed node if so. */
  evaluate(p: PreparedPod, attempt: TopologyAttempt | undefined, view: CallView): Evaluation {
    const pool = this.pool.name;
    const taint = firstUntoleratedTaint(p.pod.tolerations, this.pool.taints);
    if (taint) return fail(Stage.Taint, `NodePool ${pool} has taint ${formatTaint(taint)} it does not tolerate`);
    const port = firstPortConflict(p.ports, this.ports);
    if (port) return fail(Stage.HostPort, `host port ${formatPort(port)} is already taken on ${describeDomain(LabelKeys.hostname, this.hostname)}`);
    // A new node is never the host a volume is bound to (Karpenter keeps such hostname terms).
    if (p.volumeHosts) return fail(Stage.VolumeZone, volumeHostsSentence(p.volumeHosts));

    // The failure of the alternative that got furthest explains the whole evaluation.
    let best: Evaluation | undefined;
    const fitting = this.options.filter((o) => this.fits(o, p));
    for (const alternative of p.alternativeSets) {
      const draft: Draft = { requirements: this.requirements, options: this.options, copied: false };
      const changed: string[] = [];
      let compatible = true;
      for (const [key, requirement] of alternative) {
        // A label a node launched for this pool will not carry: only a requirement a missing label meets.
        if (!carriesLabel(this.pool.pool, key)) {
          if (requirement.allowsAbsent) continue;
          compatible = false;
          break;
        }
        const next = intersectKey(this.catalog.openKey(draft.requirements, key), requirement);
        if (!isSatisfiable(next)) {
          compatible = false;
          break;
        }
        if (next !== draft.requirements.get(key)) setKey(draft, key, next);
        changed.push(key);
      }
      if (!compatible) continue;
      if (p.volumeZones) {
        const next = intersectKey(this.catalog.openKey(draft.requirements, LabelKeys.zone), valuesIn(p.volumeZones));
        if (!isSatisfiable(next)) {
          best = furthest(best, fail(Stage.VolumeZone, `NodePool ${pool} cannot launch in its volume zone(s) ${[...p.volumeZones].join(', ')}`));
          continue;
        }
        setKey(draft, LabelKeys.zone, next);
        changed.push(LabelKeys.zone);
      }
      if (fitting.length === 0) {
        // Worded only if asked for: a full planned node is evaluated, and refuses, for every pod after it fills.
        best = furthest(best, failLater(Stage.Resources, () => `no instance type of NodePool ${pool} has room for ${formatRequests(p.pod.requests)} plus daemonset overhead`));
        continue;
      }
      draft.options = this.refilter(draft.requirements, fitting, changed);
      if (draft.options.length === 0) {
        const stage = p.volumeZones && changed.length === 1 ? Stage.VolumeZone : Stage.NodeAffinity;
        best = furthest(best, fail(stage, `no instance type of NodePool ${pool} with room for it matches its node selector / affinity${p.volumeZones ? ' / volume zones' : ''}`));
        continue;
      }
      if (attempt) {
        const failure = this.narrowForTopology(attempt, view, draft);
        if (failure) {
          best = furthest(best, failure);
          continue;
        }
      }
      return { ok: true, draft };
    }
    return best ?? fail(Stage.NodeAffinity, `NodePool ${pool} cannot satisfy its node selector / affinity`);
  }

  private fits(option: NodeOption, p: PreparedPod): boolean {
    const t = option.poolType;
    if (t.roomCpu - this.reserveCpu < this.usedCpu + p.cpu || t.roomMemory - this.reserveMemory < this.usedMemory + p.memory || t.roomPods < this.usedPods + 1) {
      return false;
    }
    for (const [key, value] of p.other) {
      if ((t.roomOther[key] ?? 0) < (this.usedOther.get(key) ?? 0) + value) return false;
    }
    return true;
  }

  /** Options whose type is compatible with the changed keys, with offerings re-filtered when zone/capacity type changed. */
  private refilter(requirements: ReadonlyMap<string, KeyRequirement>, options: readonly NodeOption[], changed: readonly string[]): readonly NodeOption[] {
    const offeringKeysChanged = changed.includes(LabelKeys.zone) || changed.includes(LabelKeys.capacityType);
    const labelKeys = changed.filter((k) => k !== LabelKeys.zone && k !== LabelKeys.capacityType);
    if (!offeringKeysChanged && labelKeys.length === 0) return options;
    const zones = requirements.get(LabelKeys.zone);
    const capacityTypes = requirements.get(LabelKeys.capacityType);
    const out: NodeOption[] = [];
    for (const option of options) {
      let compatible = true;
      for (const key of labelKeys) {
        if (!isSatisfiable(intersectKey(requirements.get(key)!, this.catalog.typeKey(option.poolType.info, key)))) {
          compatible = false;
          break;
        }
      }
      if (!compatible) continue;
      // Most narrowing keeps every offering: only copy when one drops out.
      if (!offeringKeysChanged || option.offerings.every((o) => offeringAllowed(o, zones, capacityTypes))) {
        out.push(option);
        continue;
      }
      const offerings = option.offerings.filter((o) => offeringAllowed(o, zones, capacityTypes));
      if (offerings.length > 0) out.push({ poolType: option.poolType, offerings });
    }
    return out;
  }

  /** Narrows `draft` by one key; false when nothing remains. */
  private narrow(draft: Draft, key: string, requirement: KeyRequirement): boolean {
    if (!carriesLabel(this.pool.pool, key)) return requirement.allowsAbsent;
    const current = this.catalog.openKey(draft.requirements, key);
    const next = intersectKey(current, requirement);
    if (!isSatisfiable(next)) return false;
    setKey(draft, key, next);
    // Zone and capacity type come from offerings, which always carry them: requiring their presence changes nothing.
    if (requirement === PRESENT && (key === LabelKeys.zone || key === LabelKeys.capacityType || key === LabelKeys.hostname)) return true;
    draft.options = this.refilter(draft.requirements, draft.options, [key]);
    return draft.options.length > 0;
  }

  private holdsMatch(matches: (p: PreparedPod) => boolean): PreparedPod | undefined {
    return this.pods.find(matches);
  }

  /**
   * Pod affinity, anti-affinity and topology spread on a node whose domains may still be open: each
   * constraint narrows the domain (zone ...) the node may take. Returns a failure, or undefined.
   */
  private narrowForTopology(attempt: TopologyAttempt, view: CallView, draft: Draft): Evaluation | undefined {
    const here = describeDomain(LabelKeys.hostname, this.hostname);
    for (const { group, delta } of attempt.repel) {
      if (group.key === LabelKeys.hostname) continue; // no existing pod is on this node
      const forbidden = positiveDomains(group.domainCounts, delta.byDomain);
      if (forbidden.length > 0 && !this.narrow(draft, group.key, valuesNotIn(forbidden))) {
        return fail(Stage.AntiAffinityOfOthers, `anti-affinity of existing pods rules out every ${group.key} ${this.pool.name} could use (${forbidden.join(', ')})`);
      }
    }
    for (const { placed, key } of attempt.placedRepel) {
      if (placed.newNode === this) return fail(Stage.AntiAffinityOfOthers, `anti-affinity of pod ${podName(placed.pod)} rules out ${here}`);
      if (key === LabelKeys.hostname) continue;
      const values = placed.nodeIndex !== undefined ? [view.nodeLabel(placed.nodeIndex, key)] : placed.newNode!.domainValues(key);
      const forbidden = (values ?? []).filter((v): v is string => v !== undefined);
      if (forbidden.length > 0 && !this.narrow(draft, key, valuesNotIn(forbidden))) {
        return fail(Stage.AntiAffinityOfOthers, `anti-affinity of pod ${podName(placed.pod)} rules out ${forbidden.map((d) => describeDomain(key, d)).join(', ')}`);
      }
    }
    for (const term of attempt.antiAffinity) {
      const { key, matchSet } = term.info;
      const clash = this.holdsMatch((q) => matchSet.matches(q.pod.namespace, q.pod.labels));
      if (clash) return fail(Stage.PodAntiAffinity, `anti-affinity with pod ${podName(clash.pod)} on ${here}`);
      if (key === LabelKeys.hostname) continue;
      const forbidden = positiveDomains(term.base, term.delta.byDomain);
      if (forbidden.length > 0 && !this.narrow(draft, key, valuesNotIn(forbidden))) {
        return fail(Stage.PodAntiAffinity, `anti-affinity with pods in ${forbidden.map((d) => describeDomain(key, d)).join(', ')} leaves NodePool ${this.pool.name} nowhere to launch`);
      }
    }
    for (const term of attempt.affinity) {
      const { key, matchSet } = term.info;
      if (this.holdsMatch((q) => matchSet.matches(q.pod.namespace, q.pod.labels))) {
        // Same node, same domain for every key the node carries.
        if (!this.narrow(draft, key, PRESENT)) return fail(Stage.PodAffinity, `pod affinity needs label ${key} that ${here} cannot carry`);
        continue;
      }
      const wanted = positiveDomains(term.base, term.delta.byDomain);
      if (wanted.length > 0) {
        if (!this.narrow(draft, key, valuesIn(wanted))) {
          return fail(Stage.PodAffinity, `pod affinity needs ${wanted.map((d) => describeDomain(key, d)).join(' or ')}, which NodePool ${this.pool.name} cannot provide for it`);
        }
      } else if (!attempt.firstPodAllowed || !this.narrow(draft, key, PRESENT)) {
        return fail(Stage.PodAffinity, `pod affinity: no matching pod in any ${key} a new node could use`);
      }
    }
    for (const spread of attempt.spread) {
      const { key, matchSet, maxSkew } = spread.info;
      const self = spread.info.selfMatch ? 1 : 0;
      const own = this.pods.filter((q) => matchSet.matches(q.pod.namespace, q.pod.labels)).length;
      if (key === LabelKeys.hostname) {
        const skew = own + self - spreadMin(spread, this.hostname, own);
        if (skew > maxSkew) return fail(Stage.TopologySpread, `topology spread on hostname would reach skew ${skew} > maxSkew ${maxSkew} on ${here}${HOSTNAME_DOMAINS}`);
        continue;
      }
      if (!this.narrow(draft, key, PRESENT)) return fail(Stage.TopologySpread, `topology spread needs label ${key} that ${here} cannot carry`);
      const committed = this.domainValues(key);
      // Pods already here count in the node's domain only once that domain is decided.
      const uncounted = committed && committed.length === 1 ? 0 : own;
      // Same options as committed (the usual case): reuse the cached values.
      const possible =
        draft.options === this.options && draft.requirements.get(key) === this.requirements.get(key)
          ? committed
          : possibleValues(this.catalog, this.hostname, draft.requirements, draft.options, key);
      const requirement = draft.requirements.get(key)!;
      const candidates = possible ?? [...spread.domains].filter((d) => allowsValue(requirement, d)).sort();
      let chosen: { domain: string; count: number } | undefined;
      for (const domain of candidates) {
        const count = countIn(spread.base.domainMatches, spread.delta, domain) + uncounted;
        if (count + self - spreadMin(spread, domain, count) > maxSkew) continue;
        if (!chosen || count < chosen.count) chosen = { domain, count };
      }
      if (!chosen) {
        return fail(Stage.TopologySpread, `topology spread on ${key} (maxSkew ${maxSkew}) allows none of ${candidates.map((d) => describeDomain(key, d)).join(', ') || 'the domains'} for ${here}`);
      }
      if (!this.narrow(draft, key, valuesIn([chosen.domain]))) {
        return fail(Stage.TopologySpread, `topology spread on ${key} needs ${describeDomain(key, chosen.domain)}, which no instance type left offers`);
      }
    }
    return undefined;
  }

  /** Options cheapest first, and requirements with zone / capacity type cut to what the options offer. */
  planned(): { options: NodeOption[]; requirements: Requirement[] } {
    const options = [...this.options].sort(
      (a, b) => a.offerings[0]!.pricePerHour - b.offerings[0]!.pricePerHour || compare(a.poolType.info.type.name, b.poolType.info.type.name),
    );
    const requirements = new Map(this.requirements);
    requirements.delete(LabelKeys.hostname);
    requirements.set(LabelKeys.zone, valuesIn(possibleValues(this.catalog, this.hostname, this.requirements, this.options, LabelKeys.zone) ?? []));
    requirements.set(
      LabelKeys.capacityType,
      valuesIn(possibleValues(this.catalog, this.hostname, this.requirements, this.options, LabelKeys.capacityType) ?? []),
    );
    return { options, requirements: toRequirements(requirements) };
  }
}

function offeringAllowed(o: Offering, zones: KeyRequirement | undefined, capacityTypes: KeyRequirement | undefined): boolean {
  return (!zones || allowsValue(zones, o.zone)) && (!capacityTypes || allowsValue(capacityTypes, o.capacityType));
}

const fail = (stage: Stage, reason: string): Evaluation => ({ ok: false, stage, reason });

/** A refusal whose reason is worded when first read. */
const failLater = (stage: Stage, word: () => string): Evaluation => {
  let reason: string | undefined;
  return {
    ok: false,
    stage,
    get reason() {
      return (reason ??= word());
    },
  };
};
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Domains whose count (base + delta) is positive, sorted. */
function positiveDomains(base: ReadonlyMap<string, number>, delta: ReadonlyMap<string, number>): string[] {
  const out: string[] = [];
  for (const [domain, count] of base) if (count + (delta.get(domain) ?? 0) > 0) out.push(domain);
  for (const [domain, count] of delta) if (!base.has(domain) && count > 0) out.push(domain);
  return out.sort();
}

/** Values the node may take for `key` given its requirements and remaining options; undefined when open-ended. */
export function possibleValues(
  catalog: TypeCatalog,
  hostname: string,
  requirements: ReadonlyMap<string, KeyRequirement>,
  options: readonly NodeOption[],
  key: string,
): readonly string[] | undefined {
  if (key === LabelKeys.hostname) return [hostname];
  const values = new Set<string>();
  if (key === LabelKeys.zone || key === LabelKeys.capacityType) {
    for (const option of options) for (const o of option.offerings) values.add(key === LabelKeys.zone ? o.zone : o.capacityType);
    return [...values].sort();
  }
  const requirement = catalog.openKey(requirements, key);
  for (const option of options) {
    const finite = finiteValues(intersectKey(requirement, catalog.typeKey(option.poolType.info, key)));
    if (finite === undefined) return undefined;
    for (const value of finite) values.add(value);
  }
  return [...values].sort();
}
