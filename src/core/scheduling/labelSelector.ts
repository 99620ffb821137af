// Kubernetes label selectors (matchLabels AND matchExpressions) over pod or namespace labels.
import type { LabelSelector, Labels } from '../model/types.ts';

/** A label's value, immune to keys that exist on Object.prototype ("constructor" ...). */
export function labelValue(labels: Labels, key: string): string | undefined {
  return Object.hasOwn(labels, key) ? labels[key] : undefined;
}

/** An absent selector matches nothing (pod affinity and spread semantics); `{}` matches everything. */
export function matchesSelector(selector: LabelSelector | undefined, labels: Labels): boolean {
  if (selector === undefined) return false;
  const matchLabels = selector.matchLabels;
  if (matchLabels) {
    // for-in rather than Object.entries: no array per call (this runs for every pod a simulation places)
    for (const key in matchLabels) {
      if (Object.hasOwn(matchLabels, key) && labelValue(labels, key) !== matchLabels[key]) return false;
    }
  }
  for (const expression of selector.matchExpressions ?? []) {
    const value = labelValue(labels, expression.key);
    const values = expression.values ?? [];
    switch (expression.operator) {
      case 'In':
        if (value === undefined || !values.includes(value)) return false;
        break;
      case 'NotIn':
        if (value !== undefined && values.includes(value)) return false;
        break;
      case 'Exists':
        if (value === undefined) return false;
        break;
      case 'DoesNotExist':
        if (value !== undefined) return false;
        break;
    }
  }
  return true;
}

/** True for `{}`: a present selector without any condition. */
export function selectsEverything(selector: LabelSelector | undefined): boolean {
  return (
    selector !== undefined &&
    Object.keys(selector.matchLabels ?? {}).length === 0 &&
    (selector.matchExpressions ?? []).length === 0
  );
}

// Selectors are immutable and the same ones are asked about in simulation after simulation.
const signatures = new WeakMap<LabelSelector, string>();

/** A canonical text for a selector, so equal selectors share cached counts. */
export function selectorSignature(selector: LabelSelector | undefined): string {
  if (selector === undefined) return '<none>';
  let signature = signatures.get(selector);
  if (signature === undefined) {
    signature = signatureOf(selector);
    signatures.set(selector, signature);
  }
  return signature;
}

function signatureOf(selector: LabelSelector): string {
  const labels = Object.entries(selector.matchLabels ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`);
  const expressions = (selector.matchExpressions ?? [])
    .map((e) => `${e.key} ${e.operator} ${[...(e.values ?? [])].sort().join(',')}`)
    .sort();
  return `{${labels.join(';')}|${expressions.join(';')}}`;
}

/**
 * Topology spread's matchLabelKeys: the pod's own values for those keys are ANDed into the selector
 * (keys the pod lacks are ignored, as Kubernetes does).
 */
export function withMatchLabelKeys(
  selector: LabelSelector | undefined,
  keys: readonly string[] | undefined,
  podLabels: Labels,
): LabelSelector | undefined {
  if (selector === undefined || !keys || keys.length === 0) return selector;
  const extra = keys.flatMap((key) => {
    const value = labelValue(podLabels, key);
    return value === undefined ? [] : [{ key, operator: 'In' as const, values: [value] }];
  });
  if (extra.length === 0) return selector;
  return { ...selector, matchExpressions: [...(selector.matchExpressions ?? []), ...extra] };
}
