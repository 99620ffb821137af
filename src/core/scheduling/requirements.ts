// Node-selector requirements as sets of allowed label values, per key.
//
// Two uses:
// - matching an existing node: its labels are known, so a requirement is just a test (`labelsMatch`);
// - describing a node not launched yet: its labels are only known to lie in some set, and every pod
//   that joins it narrows that set (`intersectKey`), the way Karpenter narrows a NodeClaim.
//
// A `KeyRequirement` says what one label key may be on a node: absent (when `allowsAbsent`), or present
// with a value in the set. The set is either an explicit list (`In`) or everything but a list (`NotIn`,
// `Exists`), optionally bounded by integer limits (`Gt`, `Lt`).
import type { Labels, Requirement } from '../model/types.ts';
import { labelValue } from './labelSelector.ts';

export interface KeyRequirement {
  /** True: `values` are the excluded ones; false: `values` are the only allowed ones. */
  readonly complement: boolean;
  readonly values: ReadonlySet<string>;
  /** The value must parse as an integer greater than this (Gt). */
  readonly greaterThan?: number;
  /** The value must parse as an integer less than this (Lt). */
  readonly lessThan?: number;
  /** The node may lack the label (NotIn and DoesNotExist are satisfied by a missing label). */
  readonly allowsAbsent: boolean;
}

/** Per label key; keys not present are decided by the caller (see `implicitKey` in newNode.ts). */
export type RequirementSet = ReadonlyMap<string, KeyRequirement>;

const EMPTY: ReadonlySet<string> = new Set();

/** Any value, or no label at all: the neutral element of intersection. */
export const ANY: KeyRequirement = { complement: true, values: EMPTY, allowsAbsent: true };
/** The label must not be there. */
export const ABSENT: KeyRequirement = { complement: false, values: EMPTY, allowsAbsent: true };
/** The label must be there, with any value. */
export const PRESENT: KeyRequirement = { complement: true, values: EMPTY, allowsAbsent: false };

export function valuesIn(values: Iterable<string>): KeyRequirement {
  return { complement: false, values: new Set(values), allowsAbsent: false };
}

export function valuesNotIn(values: Iterable<string>): KeyRequirement {
  return { complement: true, values: new Set(values), allowsAbsent: true };
}

function parseInteger(text: string | undefined): number | undefined {
  if (text === undefined || !/^-?\d+$/.test(text.trim())) return undefined;
  return Number(text.trim());
}

export function keyRequirementOf(requirement: Requirement): KeyRequirement {
  switch (requirement.operator) {
    case 'In':
      return valuesIn(requirement.values);
    case 'NotIn':
      return valuesNotIn(requirement.values);
    case 'Exists':
      return PRESENT;
    case 'DoesNotExist':
      return ABSENT;
    case 'Gt': {
      const bound = parseInteger(requirement.values[0]);
      // An unparsable bound can never be met (Kubernetes rejects it).
      return bound === undefined ? { ...PRESENT, complement: false } : { ...PRESENT, greaterThan: bound };
    }
    case 'Lt': {
      const bound = parseInteger(requirement.values[0]);
      return bound === undefined ? { ...PRESENT, complement: false } : { ...PRESENT, lessThan: bound };
    }
    // Inclusive bounds on integers are the strict ones moved by one (as Karpenter canonicalizes them).
    case 'Gte': {
      const bound = parseInteger(requirement.values[0]);
      return bound === undefined ? { ...PRESENT, complement: false } : { ...PRESENT, greaterThan: bound - 1 };
    }
    case 'Lte': {
      const bound = parseInteger(requirement.values[0]);
      return bound === undefined ? { ...PRESENT, complement: false } : { ...PRESENT, lessThan: bound + 1 };
    }
  }
}

function withinBounds(requirement: KeyRequirement, value: string): boolean {
  if (requirement.greaterThan === undefined && requirement.lessThan === undefined) return true;
  const number = parseInteger(value);
  if (number === undefined) return false;
  if (requirement.greaterThan !== undefined && !(number > requirement.greaterThan)) return false;
  if (requirement.lessThan !== undefined && !(number < requirement.lessThan)) return false;
  return true;
}

/** Whether a node whose label is `value` (undefined: no label) satisfies the requirement. */
export function allowsValue(requirement: KeyRequirement, value: string | undefined): boolean {
  if (value === undefined) return requirement.allowsAbsent;
  const listed = requirement.values.has(value);
  if (requirement.complement ? listed : !listed) return false;
  return withinBounds(requirement, value);
}

/** True when some label value (not absence) satisfies the requirement. */
export function allowsSomeValue(requirement: KeyRequirement): boolean {
  if (!requirement.complement) {
    for (const value of requirement.values) if (withinBounds(requirement, value)) return true;
    return false;
  }
  const { greaterThan, lessThan } = requirement;
  // No integer strictly between the bounds; excluded values inside a wide range are not worth counting.
  return !(greaterThan !== undefined && lessThan !== undefined && lessThan - greaterThan <= 1);
}

export function isSatisfiable(requirement: KeyRequirement): boolean {
  return requirement.allowsAbsent || allowsSomeValue(requirement);
}

/** The finite list of allowed values, or undefined when the set is open-ended (NotIn, Exists, Gt ...). */
export function finiteValues(requirement: KeyRequirement): string[] | undefined {
  if (requirement.complement) return undefined;
  return [...requirement.values].filter((value) => withinBounds(requirement, value));
}

/** The one value a node must carry, when exactly one is possible and the label cannot be absent. */
export function singleValue(requirement: KeyRequirement): string | undefined {
  if (requirement.allowsAbsent) return undefined;
  const values = finiteValues(requirement);
  return values && values.length === 1 ? values[0] : undefined;
}

const maxDefined = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : Math.max(a, b);
const minDefined = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b);

/**
 * Whether `a` and `b` together allow exactly what `a` allows, in the plain case (both list their values,
 * no bounds): a node already narrowed by a requirement meets it again with every pod of the same kind,
 * and keeping `a` itself then spares a copy of its values (and lets callers see that nothing changed).
 */
function narrowsNothing(a: KeyRequirement, b: KeyRequirement): boolean {
  if (a.complement || b.complement || a.greaterThan !== undefined || a.lessThan !== undefined || b.greaterThan !== undefined || b.lessThan !== undefined) return false;
  if (a.allowsAbsent && !b.allowsAbsent) return false;
  if (a.values.size > b.values.size) return false;
  for (const value of a.values) if (!b.values.has(value)) return false;
  return true;
}

/** Values that satisfy both requirements (and absence only when both allow it). */
export function intersectKey(a: KeyRequirement, b: KeyRequirement): KeyRequirement {
  if (a === ANY) return b;
  if (b === ANY) return a;
  if (a === b || narrowsNothing(a, b)) return a;
  const greaterThan = maxDefined(a.greaterThan, b.greaterThan);
  const lessThan = minDefined(a.lessThan, b.lessThan);
  const allowsAbsent = a.allowsAbsent && b.allowsAbsent;
  let complement: boolean;
  let values: Set<string>;
  if (a.complement && b.complement) {
    complement = true;
    values = new Set([...a.values, ...b.values]);
  } else if (!a.complement && !b.complement) {
    complement = false;
    values = new Set([...a.values].filter((value) => b.values.has(value)));
  } else {
    const [listed, excluded] = a.complement ? [b, a] : [a, b];
    complement = false;
    values = new Set([...listed.values].filter((value) => !excluded.values.has(value)));
  }
  const result: KeyRequirement = { complement, values, allowsAbsent, greaterThan, lessThan };
  if (!complement && (greaterThan !== undefined || lessThan !== undefined)) {
    // Apply the bounds now so the explicit list stays exact.
    return { complement, allowsAbsent, values: new Set([...values].filter((value) => withinBounds(result, value))), greaterThan, lessThan };
  }
  return result;
}

/** A requirement set from node-selector requirements (repeated keys are ANDed). */
export function requirementSetOf(requirements: readonly Requirement[]): Map<string, KeyRequirement> {
  const set = new Map<string, KeyRequirement>();
  for (const requirement of requirements) {
    const key = keyRequirementOf(requirement);
    const existing = set.get(requirement.key);
    set.set(requirement.key, existing ? intersectKey(existing, key) : key);
  }
  return set;
}

/** Fixed labels (nodeSelector, template labels) as `key In [value]` requirements. */
export function requirementSetOfLabels(labels: Labels): Map<string, KeyRequirement> {
  const set = new Map<string, KeyRequirement>();
  for (const [key, value] of Object.entries(labels)) set.set(key, valuesIn([value]));
  return set;
}

/** Both sets at once; a key that ends up unsatisfiable stays in the result (check with `firstUnsatisfiable`). */
export function intersectSets(a: RequirementSet, b: RequirementSet): Map<string, KeyRequirement> {
  const result = new Map(a);
  for (const [key, requirement] of b) {
    const existing = result.get(key);
    result.set(key, existing ? intersectKey(existing, requirement) : requirement);
  }
  return result;
}

export function firstUnsatisfiable(set: RequirementSet): string | undefined {
  for (const [key, requirement] of set) if (!isSatisfiable(requirement)) return key;
  return undefined;
}

/** Kubernetes node-selector semantics against a known node's labels. */
export function labelsMatch(labels: Labels, requirement: Requirement): boolean {
  const value = labelValue(labels, requirement.key);
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && requirement.values.includes(value);
    case 'NotIn':
      return value === undefined || !requirement.values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt':
    case 'Gte':
    case 'Lte': {
      const actual = parseInteger(value);
      const bound = parseInteger(requirement.values[0]);
      if (actual === undefined || bound === undefined) return false;
      switch (requirement.operator) {
        case 'Gt':
          return actual > bound;
        case 'Lt':
          return actual < bound;
        case 'Gte':
          return actual >= bound;
        default:
          return actual <= bound;
      }
    }
  }
}

export function labelsMatchAll(labels: Labels, requirements: readonly Requirement[]): boolean {
  for (const requirement of requirements) if (!labelsMatch(labels, requirement)) return false;
  return true;
}

/** Back to the model's requirement list (sorted by key), e.g. for a new node's plan. */
export function toRequirements(set: RequirementSet): Requirement[] {
  const out: Requirement[] = [];
  for (const key of [...set.keys()].sort()) {
    const requirement = set.get(key)!;
    const values = [...requirement.values].sort();
    if (!requirement.complement) {
      out.push(values.length === 0 ? { key, operator: 'DoesNotExist', values: [] } : { key, operator: 'In', values });
      continue;
    }
    if (values.length > 0) out.push({ key, operator: 'NotIn', values });
    else if (!requirement.allowsAbsent && requirement.greaterThan === undefined && requirement.lessThan === undefined) {
      out.push({ key, operator: 'Exists', values: [] });
    }
    if (requirement.greaterThan !== undefined) out.push({ key, operator: 'Gt', values: [String(requirement.greaterThan)] });
    if (requirement.lessThan !== undefined) out.push({ key, operator: 'Lt', values: [String(requirement.lessThan)] });
  }
  return out;
}
