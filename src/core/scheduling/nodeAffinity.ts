// A pod's required node constraints (nodeSelector AND one of the required node-affinity terms) as
// alternatives, for existing nodes (label tests) and for nodes not launched yet (requirement sets).
import type { PodSchedulingSpec, Requirement } from '../model/types.ts';
import {
  intersectKey,
  isSatisfiable,
  labelsMatchAll,
  requirementSetOf,
  type KeyRequirement,
  type RequirementSet,
} from './requirements.ts';
import type { Labels } from '../model/types.ts';

/**
 * The alternatives a node may satisfy (ORed); each lists requirements that must all hold.
 * No affinity: one alternative, the nodeSelector. Kubernetes ignores nothing here: a term without
 * expressions matches no node, so it contributes no alternative.
 */
export function nodeConstraintAlternatives(spec: PodSchedulingSpec): Requirement[][] {
  const selector: Requirement[] = Object.entries(spec.nodeSelector).map(([key, value]) => ({ key, operator: 'In', values: [value] }));
  if (spec.requiredNodeAffinity.length === 0) return [selector];
  return spec.requiredNodeAffinity
    .filter((term) => term.matchExpressions.length > 0)
    .map((term) => [...selector, ...term.matchExpressions]);
}

/** True when the spec puts no node constraint at all. */
export function isUnconstrained(alternatives: readonly Requirement[][]): boolean {
  return alternatives.length === 1 && alternatives[0]!.length === 0;
}

export function labelsMatchAlternatives(labels: Labels, alternatives: readonly Requirement[][]): boolean {
  for (const alternative of alternatives) if (labelsMatchAll(labels, alternative)) return true;
  return false;
}

export function alternativeSets(alternatives: readonly Requirement[][]): RequirementSet[] {
  return alternatives.map((alternative) => requirementSetOf(alternative));
}

/** Whether a node described by `keyAt` (what each label may be) could satisfy every requirement of `set`. */
export function setCompatible(set: RequirementSet, keyAt: (key: string) => KeyRequirement): boolean {
  for (const [key, requirement] of set) {
    if (!isSatisfiable(intersectKey(keyAt(key), requirement))) return false;
  }
  return true;
}
