// Everything the simulation needs to know about one pod to place, derived once and cached per Pod
// object: the disruption layer simulates the same pods many times per pass.
import type { Pod, Requirement } from '../model/types.ts';
import { LabelKeys } from '../model/types.ts';
import type { BoundPods, ExistingNode } from './existingNodes.ts';
import { normalizeHostPorts, type PortUse } from './hostPorts.ts';
import type { TypeCatalog } from './instanceTypes.ts';
import { matchesSelector, withMatchLabelKeys } from './labelSelector.ts';
import {
  alternativeSets,
  isUnconstrained,
  labelsMatchAlternatives,
  nodeConstraintAlternatives,
  setCompatible,
} from './nodeAffinity.ts';
import type { PoolInfo } from './nodePools.ts';
import { labelPairKeys } from './callCounts.ts';
import { matchSetSignature, type Namespaces, type PodIndex } from './podIndex.ts';
import { allowsValue, ANY, type RequirementSet } from './requirements.ts';
import { CPU, MEMORY, PODS } from './resources.ts';
import { firstUntoleratedTaint } from './taints.ts';
import { spreadBaseOn, spreadNodes, type AntiGroup, type AntiGroupIndex, type SpreadBase, type SpreadInfo, type SpreadNodes, type TermInfo } from './topology.ts';

export interface PreparedPod {
  readonly pod: Pod;
  readonly cpu: number;
  readonly memory: number;
  /** Positive requests other than cpu and memory. */
  readonly other: readonly (readonly [string, number])[];
  /** Node constraint alternatives (nodeSelector AND one affinity term); see nodeAffinity.ts. */
  readonly alternatives: readonly Requirement[][];
  readonly alternativeSets: readonly RequirementSet[];
  readonly unconstrained: boolean;
  readonly volumeZones: ReadonlySet<string> | undefined;
  /** Hostnames its volumes pin it to (Pod.volumeHosts). */
  readonly volumeHosts: ReadonlySet<string> | undefined;
  readonly ports: readonly PortUse[];
  readonly affinity: readonly TermInfo[];
  readonly antiAffinity: readonly TermInfo[];
  /** The pod matches all of its own affinity terms (may start a self-affine group in an empty domain). */
  readonly selfAffine: boolean;
  readonly spread: readonly SpreadInfo[];
  /** Anti-affinity groups of existing pods that repel this pod. */
  readonly repelledBy: readonly AntiGroup[];
  /** Index in the topology pod index when the pod is counted in the cluster as it is. */
  readonly topologyIndex: number | undefined;
  /**
   * Per existing node, the verdict of the checks that never change between simulations (taints,
   * node affinity, volume zone): 0 not computed yet, otherwise 1 + Stage (1 = Ok). Shared by every pod
   * with the same tolerations, node constraints and volume zones (a workload's replicas): one array per
   * pod would take pods x nodes bytes, 785 MB per simulator at 5,000 nodes and 157k pods.
   */
  readonly staticVerdicts: Int8Array;
  /** Its labels as the pair keys a simulation's topology counts file pods under (callCounts.ts). */
  readonly labelPairs: readonly string[];
}

export interface PrepareContext {
  readonly nodes: readonly ExistingNode[];
  readonly index: PodIndex;
  /** Where the cluster has each pod bound (to find a prepared pod's own entry in the index). */
  readonly bound: Pick<BoundPods, 'nodeIndexOf'>;
  readonly namespaces: Namespaces;
  readonly catalog: TypeCatalog;
  readonly pools: readonly PoolInfo[];
  readonly antiGroups: AntiGroupIndex;
  readonly spreadBases: Map<string, SpreadBase>;
  /** The selector-free part of the spread bases, by SpreadShape.nodeSignature. */
  readonly spreadNodes: Map<string, SpreadNodes>;
  /** Static verdict arrays by (tolerations, node constraints, volume zones). */
  readonly staticVerdicts: Map<string, Int8Array>;
}

/** What a pod's own spec decides, whatever the simulation: worked out once per (immutable) pod object. */
interface PodShape {
  readonly other: readonly [string, number][];
  readonly alternatives: readonly Requirement[][];
  readonly sets: readonly RequirementSet[];
  readonly unconstrained: boolean;
  readonly volumeZones: ReadonlySet<string> | undefined;
  readonly volumeHosts: ReadonlySet<string> | undefined;
  readonly ports: readonly PortUse[];
  readonly labelPairs: readonly string[];
  /** Pods of the same signature share their static verdicts (sharedStaticVerdicts). */
  readonly staticSignature: string;
  /** Its DoNotSchedule spread constraints' shapes (spreadShapesOf), worked out on first use. */
  spread?: readonly SpreadShape[];
}

// A pass places the same pod objects in simulation after simulation (so the signature's JSON.stringify
// and the requirement sets are no longer rebuilt for every pod of every simulation). One lookup per
// pod prepared: at 5,000 nodes a pass prepares about two million pods, and the separate per-pod caches
// this replaces (spread shapes, label pairs) cost a lookup each.
const shapes = new WeakMap<Pod, PodShape>();

function shapeOf(pod: Pod): PodShape {
  let shape = shapes.get(pod);
  if (!shape) {
    const other: [string, number][] = [];
    for (const key in pod.requests) {
      const value = pod.requests[key]!;
      if (key !== CPU && key !== MEMORY && key !== PODS && value > 0) other.push([key, value]);
    }
    const alternatives = nodeConstraintAlternatives(pod);
    shape = {
      other,
      alternatives,
      sets: alternativeSets(alternatives),
      unconstrained: isUnconstrained(alternatives),
      volumeZones: pod.volumeZones ? new Set(pod.volumeZones) : undefined,
      volumeHosts: pod.volumeHosts ? new Set(pod.volumeHosts) : undefined,
      ports: normalizeHostPorts(pod.hostPorts),
      labelPairs: labelPairKeys(pod.labels),
      staticSignature: JSON.stringify([pod.tolerations, alternatives, pod.volumeZones ?? null, pod.volumeHosts ?? null]),
    };
    shapes.set(pod, shape);
  }
  return shape;
}

function termsOf(list: Pod['podAffinity'], pod: Pod, ctx: PrepareContext): TermInfo[] {
  if (list.length === 0) return [];
  return list.map((term) => ({
    term,
    key: term.topologyKey,
    matchSet: ctx.index.matchSet(term.labelSelector, ctx.namespaces.ofTerm(term, pod.namespace)),
  }));
}

export function preparePod(pod: Pod, ctx: PrepareContext): PreparedPod {
  const shape = shapeOf(pod);
  const { other, alternatives, sets, staticSignature } = shape;
  const affinity = termsOf(pod.podAffinity, pod, ctx);
  const antiAffinity = termsOf(pod.podAntiAffinity, pod, ctx);
  const spread = spreadShapesOf(pod, shape, ctx).map((spreadShape) => prepareSpread(pod, spreadShape, alternatives, sets, ctx));
  return {
    pod,
    cpu: pod.requests[CPU] ?? 0,
    memory: pod.requests[MEMORY] ?? 0,
    other,
    alternatives,
    alternativeSets: sets,
    unconstrained: shape.unconstrained,
    volumeZones: shape.volumeZones,
    volumeHosts: shape.volumeHosts,
    ports: shape.ports,
    affinity,
    antiAffinity,
    selfAffine: affinity.every((t) => t.matchSet.matches(pod.namespace, pod.labels)),
    spread,
    repelledBy: ctx.antiGroups.matching(pod),
    topologyIndex: ctx.index.indexOf(pod, ctx.bound.nodeIndexOf(pod)),
    staticVerdicts: sharedStaticVerdicts(staticSignature, ctx),
    labelPairs: shape.labelPairs,
  };
}

/** The static verdicts of every pod that the same taints, node labels and zones judge the same way. */
function sharedStaticVerdicts(signature: string, ctx: PrepareContext): Int8Array {
  let verdicts = ctx.staticVerdicts.get(signature);
  if (!verdicts) {
    verdicts = new Int8Array(ctx.nodes.length);
    ctx.staticVerdicts.set(signature, verdicts);
  }
  return verdicts;
}

/** What a pod's spread constraint decides whatever the simulation (its selector, policies, signature). */
interface SpreadShape {
  readonly constraint: Pod['topologySpread'][number];
  readonly selector: ReturnType<typeof withMatchLabelKeys>;
  readonly honorAffinity: boolean;
  readonly honorTaints: boolean;
  readonly selfMatch: boolean;
  /** Identifies the spread base: pods with the same one count the same domains the same way. */
  readonly signature: string;
  /** Identifies its eligible nodes and their domains (the signature without the selector). */
  readonly nodeSignature: string;
}

// Per pod object (kept in its PodShape), its DoNotSchedule constraints' shapes: a pass prepares the same
// pods in each of its ~50 simulators, and the signature's JSON and the selector's signature were most of
// that. (The namespace scope's signature names the namespace alone, whichever simulation asks.)
function spreadShapesOf(pod: Pod, podShape: PodShape, ctx: PrepareContext): readonly SpreadShape[] {
  let shapesOfPod = podShape.spread;
  if (!shapesOfPod) {
    const alternatives = podShape.alternatives;
    shapesOfPod = pod.topologySpread
      .filter((c) => c.whenUnsatisfiable === 'DoNotSchedule')
      .map((constraint) => {
        const selector = withMatchLabelKeys(constraint.labelSelector, constraint.matchLabelKeys, pod.labels);
        const honorAffinity = (constraint.nodeAffinityPolicy ?? 'Honor') === 'Honor';
        const honorTaints = (constraint.nodeTaintsPolicy ?? 'Ignore') === 'Honor';
        const affinityPart = honorAffinity ? JSON.stringify(alternatives) : '*';
        const taintsPart = honorTaints ? JSON.stringify(pod.tolerations) : '*';
        const signature = [constraint.topologyKey, matchSetSignature(selector, ctx.namespaces.listed([pod.namespace])), affinityPart, taintsPart].join('|');
        const nodeSignature = [constraint.topologyKey, affinityPart, taintsPart].join('|');
        return { constraint, selector, honorAffinity, honorTaints, selfMatch: matchesSelector(selector, pod.labels), signature, nodeSignature };
      });
    podShape.spread = shapesOfPod;
  }
  return shapesOfPod;
}

function prepareSpread(
  pod: Pod,
  shape: SpreadShape,
  alternatives: readonly Requirement[][],
  sets: readonly RequirementSet[],
  ctx: PrepareContext,
): SpreadInfo {
  const { constraint, selector, honorAffinity, honorTaints, signature } = shape;
  const matchSet = ctx.index.matchSet(selector, ctx.namespaces.listed([pod.namespace]));
  const key = constraint.topologyKey;
  const poolDomainCache = new Map<string, readonly string[]>();
  return {
    constraint,
    key,
    maxSkew: constraint.maxSkew,
    minDomains: constraint.minDomains ?? 1,
    matchSet,
    selfMatch: shape.selfMatch,
    honorAffinity,
    honorTaints,
    base: () => {
      let base = ctx.spreadBases.get(signature);
      if (!base) {
        let part = ctx.spreadNodes.get(shape.nodeSignature);
        if (!part) {
          part = spreadNodes(
            ctx.nodes,
            key,
            (node: ExistingNode) =>
              (!honorAffinity || labelsMatchAlternatives(node.labels, alternatives)) &&
              (!honorTaints || firstUntoleratedTaint(pod.tolerations, node.spreadTaints) === undefined),
          );
          ctx.spreadNodes.set(shape.nodeSignature, part);
        }
        base = spreadBaseOn(part, matchSet);
        ctx.spreadBases.set(signature, base);
      }
      return base;
    },
    poolDomains: (poolName) => {
      let domains = poolDomainCache.get(poolName);
      if (!domains) {
        domains = poolDomainsFor(pod, key, honorAffinity, honorTaints, sets, ctx, poolName);
        poolDomainCache.set(poolName, domains);
      }
      return domains;
    },
  };
}

/** Domains a new node of the pool could add for this constraint, as the policies count them. */
function poolDomainsFor(
  pod: Pod,
  key: string,
  honorAffinity: boolean,
  honorTaints: boolean,
  sets: readonly RequirementSet[],
  ctx: PrepareContext,
  poolName: string,
): readonly string[] {
  const pool = ctx.pools.find((p) => p.name === poolName);
  if (!pool || key === LabelKeys.hostname) return [];
  if (honorTaints && firstUntoleratedTaint(pod.tolerations, pool.taints) !== undefined) return [];
  const values = pool.domainValues(key) ?? [];
  if (!honorAffinity) return values;
  const keyAt = (k: string) => ctx.catalog.openKey(pool.requirements, k);
  const compatible = sets.filter((set) => setCompatible(set, keyAt));
  return values.filter((value) => compatible.some((set) => allowsValue(set.get(key) ?? ANY, value)));
}
