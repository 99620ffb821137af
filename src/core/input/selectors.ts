// Node-selector requirements and label selectors, shared by pods (node affinity, pod affinity, topology
// spread, PDBs) and NodePools (requirements). The two dialects differ only in validation details.
import type { LabelSelector, Requirement, SelectorOperator, Taint, TaintEffect } from '../model/types.ts';
import { Fields, type JsonRecord } from './fields.ts';
import { labelKeyProblem } from './names.ts';

export const SELECTOR_OPERATORS: readonly SelectorOperator[] = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];
/** Karpenter v1.14's NodePool requirements add inclusive bounds. */
export const NODE_POOL_OPERATORS: readonly SelectorOperator[] = [...SELECTOR_OPERATORS, 'Gte', 'Lte'];
/** The CRD's bounds on `minValues`. */
const MIN_VALUES_MAX = 50;
const LABEL_SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;
export const TAINT_EFFECTS: readonly TaintEffect[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/**
 * `kubernetes`: the API server's rules for node affinity (In/NotIn need values, Exists/DoesNotExist
 * take none, Gt/Lt one integer).
 * `karpenter`: a NodePool's rules: In needs a value, NotIn may be empty, Gt/Lt/Gte/Lte take one
 * non-negative integer, `minValues` from 1 to 50 and, with In, no more than the values listed
 * (Karpenter v1.14's NodePool CRD).
 */
export type RequirementDialect = 'kubernetes' | 'karpenter';

export function parseRequirement(f: Fields, raw: unknown, path: string, dialect: RequirementDialect): Requirement {
  const r = f.record(raw, path);
  const key = f.string(r['key'], `${path}.key`);
  // The NodePool CRD holds requirement keys to the label key rules; a pod's node affinity was checked
  // by the API server (and `matchFields` keys are field paths).
  if (dialect === 'karpenter') {
    const problem = labelKeyProblem(key);
    if (problem !== undefined) f.fail(`${path}.key`, problem);
  }
  const operator = f.oneOf(r['operator'], `${path}.operator`, dialect === 'karpenter' ? NODE_POOL_OPERATORS : SELECTOR_OPERATORS);
  const values = f.stringList(r['values'], `${path}.values`);
  const valuesPath = `${path}.values`;
  switch (operator) {
    case 'In':
      if (values.length === 0) f.fail(valuesPath, 'operator In needs at least one value');
      break;
    case 'NotIn':
      if (dialect === 'kubernetes' && values.length === 0) f.fail(valuesPath, 'operator NotIn needs at least one value');
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) f.fail(valuesPath, `operator ${operator} takes no values`);
      break;
    case 'Gt':
    case 'Lt':
    case 'Gte':
    case 'Lte': {
      const pattern = dialect === 'karpenter' ? /^\d+$/ : /^[+-]?\d+$/;
      if (values.length !== 1 || !pattern.test(values[0] ?? '')) {
        f.fail(valuesPath, `operator ${operator} needs exactly one ${dialect === 'karpenter' ? 'non-negative ' : ''}integer value`);
      }
      break;
    }
  }
  if (dialect === 'kubernetes') return { key, operator, values };
  const minValues = f.optInteger(r['minValues'], `${path}.minValues`);
  if (minValues === undefined) return { key, operator, values };
  if (minValues < 1 || minValues > MIN_VALUES_MAX) f.fail(`${path}.minValues`, `${minValues} must be an integer from 1 to ${MIN_VALUES_MAX}`);
  if (operator === 'In' && values.length < minValues) {
    f.fail(`${path}.minValues`, `${minValues} is more than the ${values.length} value(s) listed; operator In with minValues needs at least that many values`);
  }
  return { key, operator, values, minValues };
}

/** A Kubernetes label selector (`matchLabels` + `matchExpressions`). */
export function parseLabelSelector(f: Fields, raw: unknown, path: string): LabelSelector {
  const s = f.record(raw, path);
  const matchLabels = f.stringMap(s['matchLabels'], `${path}.matchLabels`);
  const matchExpressions = f.optArray(s['matchExpressions'], `${path}.matchExpressions`).map((e, i) => {
    const p = `${path}.matchExpressions[${i}]`;
    const r = f.record(e, p);
    const key = f.string(r['key'], `${p}.key`);
    const operator = f.oneOf(r['operator'], `${p}.operator`, LABEL_SELECTOR_OPERATORS);
    const values = f.stringList(r['values'], `${p}.values`);
    if ((operator === 'In' || operator === 'NotIn') && values.length === 0) f.fail(`${p}.values`, `operator ${operator} needs at least one value`);
    if ((operator === 'Exists' || operator === 'DoesNotExist') && values.length > 0) f.fail(`${p}.values`, `operator ${operator} takes no values`);
    return { key, operator, values };
  });
  return {
    ...(Object.keys(matchLabels).length > 0 ? { matchLabels } : {}),
    ...(matchExpressions.length > 0 ? { matchExpressions } : {}),
  };
}

export function parseOptLabelSelector(f: Fields, raw: unknown, path: string): LabelSelector | undefined {
  return raw === undefined || raw === null ? undefined : parseLabelSelector(f, raw, path);
}

/** Node taints (spec.taints) and NodePool template taints. */
export function parseTaints(f: Fields, raw: unknown, path: string): Taint[] {
  return f.optArray(raw, path).map((t, i) => {
    const p = `${path}[${i}]`;
    const r: JsonRecord = f.record(t, p);
    const key = f.string(r['key'], `${p}.key`);
    const value = f.optString(r['value'], `${p}.value`);
    const effect = f.oneOf(r['effect'], `${p}.effect`, TAINT_EFFECTS);
    return value === undefined || value === '' ? { key, effect } : { key, value, effect };
  });
}
