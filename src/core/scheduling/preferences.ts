// Scheduling preferences the way Karpenter's default preference policy (Respect) treats them: a pod is
// first placed as if its preferences were required, and they are given up one at a time, only when the
// pod fits nowhere with them (Karpenter's scheduling "preferences" relaxation). The order it gives them
// up in: preferred pod affinity terms, then preferred pod anti-affinity terms (heaviest first, one term a
// step), then preferred node affinity (the heaviest term counts as required; dropping it makes the next
// heaviest count), then `ScheduleAnyway` topology spread constraints. With every preference given up the
// pod is the pod itself, as the simulation reads it without preferences (policy Ignore).
//
// kube-scheduler never filters on a preference, it only scores: the kube-scheduler check places pods
// without them (simulator.ts applies the ladder to best-fit placements only).
import { InputError } from '../errors.ts';
import type { NodeSelectorTerm, Pod, TopologySpreadConstraint, WeightedPodAffinityTerm } from '../model/types.ts';

/** Karpenter's `--preference-policy` / PREFERENCE_POLICY: Respect (default) or Ignore. */
export type PreferencePolicy = 'Respect' | 'Ignore';

export const PREFERENCE_POLICIES: readonly PreferencePolicy[] = ['Respect', 'Ignore'];

/** Parses `--preference-policy` / PREFERENCE_POLICY (any case; empty or unset: Respect, Karpenter's default). */
export function parsePreferencePolicy(text: string | undefined, source = 'PREFERENCE_POLICY'): PreferencePolicy {
  const value = text?.trim() ?? '';
  if (value === '') return 'Respect';
  const policy = PREFERENCE_POLICIES.find((p) => p.toLowerCase() === value.toLowerCase());
  if (!policy) throw new InputError('', source, `"${text}" is not Respect or Ignore (default Respect, as in Karpenter)`);
  return policy;
}

/** Whether the pod states any preference the ladder can require. */
export function hasPreferences(pod: Pod): boolean {
  return (
    (pod.preferredNodeAffinity?.length ?? 0) > 0 ||
    (pod.preferredPodAffinity?.length ?? 0) > 0 ||
    (pod.preferredPodAntiAffinity?.length ?? 0) > 0 ||
    pod.topologySpread.some((c) => c.whenUnsatisfiable === 'ScheduleAnyway')
  );
}

const ladders = new WeakMap<Pod, readonly Pod[]>();
const originals = new WeakMap<Pod, Pod>();

/**
 * The pod with its preferences required, strictest first, one preference fewer each step; the pod
 * itself (nothing required beyond its own constraints) is not in the list, it is the last resort.
 * Empty when the pod states no preference. The same objects every time for the same pod, so a
 * simulation's per-pod caches hold.
 */
export function preferenceLadder(pod: Pod): readonly Pod[] {
  let ladder = ladders.get(pod);
  if (!ladder) {
    ladder = hasPreferences(pod) ? buildLadder(pod) : [];
    ladders.set(pod, ladder);
  }
  return ladder;
}

/** The pod a ladder step was made from (the step itself for any other pod). */
export function originalPod(pod: Pod): Pod {
  return originals.get(pod) ?? pod;
}

interface Kept {
  readonly podAffinity: readonly WeightedPodAffinityTerm[];
  readonly podAntiAffinity: readonly WeightedPodAffinityTerm[];
  readonly nodeAffinity: readonly NodeSelectorTerm[];
  readonly scheduleAnyway: readonly TopologySpreadConstraint[];
}

const heaviestFirst = <T extends { readonly weight: number }>(terms: readonly T[] | undefined): T[] =>
  [...(terms ?? [])].sort((a, b) => b.weight - a.weight);

function buildLadder(pod: Pod): Pod[] {
  let kept: Kept = {
    podAffinity: heaviestFirst(pod.preferredPodAffinity),
    podAntiAffinity: heaviestFirst(pod.preferredPodAntiAffinity),
    nodeAffinity: heaviestFirst(pod.preferredNodeAffinity).map((t) => t.preference),
    scheduleAnyway: pod.topologySpread.filter((c) => c.whenUnsatisfiable === 'ScheduleAnyway'),
  };
  const steps: Pod[] = [];
  for (;;) {
    steps.push(required(pod, kept));
    // Give up one preference, in Karpenter's order.
    if (kept.podAffinity.length > 0) kept = { ...kept, podAffinity: kept.podAffinity.slice(1) };
    else if (kept.podAntiAffinity.length > 0) kept = { ...kept, podAntiAffinity: kept.podAntiAffinity.slice(1) };
    else if (kept.nodeAffinity.length > 0) kept = { ...kept, nodeAffinity: kept.nodeAffinity.slice(1) };
    else if (kept.scheduleAnyway.length > 0) kept = { ...kept, scheduleAnyway: kept.scheduleAnyway.slice(1) };
    else break;
    const empty = kept.podAffinity.length + kept.podAntiAffinity.length + kept.nodeAffinity.length + kept.scheduleAnyway.length === 0;
    if (empty) break;
  }
  return steps;
}

/** The pod with the kept preferences made required (the heaviest kept node preference ANDed into every term). */
function required(pod: Pod, kept: Kept): Pod {
  const preference = kept.nodeAffinity[0];
  const requiredNodeAffinity =
    preference === undefined
      ? pod.requiredNodeAffinity
      : pod.requiredNodeAffinity.length === 0
        ? [preference]
        : pod.requiredNodeAffinity.map((term) => ({ matchExpressions: [...term.matchExpressions, ...preference.matchExpressions] }));
  const anyway = new Set(kept.scheduleAnyway);
  const step: Pod = {
    ...pod,
    requiredNodeAffinity,
    podAffinity: [...pod.podAffinity, ...kept.podAffinity.map((t) => t.term)],
    podAntiAffinity: [...pod.podAntiAffinity, ...kept.podAntiAffinity.map((t) => t.term)],
    topologySpread: pod.topologySpread.map((c) => (anyway.has(c) ? { ...c, whenUnsatisfiable: 'DoNotSchedule' as const } : c)),
  };
  originals.set(step, pod);
  return step;
}
