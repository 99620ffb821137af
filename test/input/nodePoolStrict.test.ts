// NodePool strictness (docs/nodepools.md, "Honoured or refused, never ignored"): fields Karpenter
// v1.14's CRD does not know are refused with the path and, when it is a misspelling, the field meant;
// fields it knows but this product does not use are accepted.
import { describe, expect, it } from 'vitest';
import { HANDOVER_ANNOTATION, parseNodePools } from '../../src/core/input/nodePools.ts';
import { Fields } from '../../src/core/input/fields.ts';
import { parseRequirement } from '../../src/core/input/selectors.ts';
import { expectInputError } from './helpers.ts';

const NP = 'NodePool "p"';
const base = () => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'p' } as Record<string, unknown>,
  spec: {
    template: { metadata: {} as Record<string, unknown>, spec: { requirements: [] as unknown[] } as Record<string, unknown> },
    disruption: { consolidateAfter: '0s' } as Record<string, unknown>,
  } as Record<string, unknown>,
});
type Doc = ReturnType<typeof base>;
const tweak = (change: (d: Doc) => void): Doc => {
  const d = base();
  change(d);
  return d;
};

describe('unknown fields', () => {
  it.each([
    ['a policy with a capital U', tweak((d) => ((d.spec['disruption'] as Record<string, unknown>)['consolidationPolicy'] = 'WhenEmptyOrUnderUtilized')), 'spec.disruption.consolidationPolicy', 'did you mean "WhenEmptyOrUnderutilized"'],
    ['a policy far from any', tweak((d) => ((d.spec['disruption'] as Record<string, unknown>)['consolidationPolicy'] = 'Always')), 'spec.disruption.consolidationPolicy', "WhenUnderutilized, WhenCheaper, WhenUnderutilizedOrCheaper (this product's own"],
    ['misspelled consolidateAfter', tweak((d) => ((d.spec['disruption'] as Record<string, unknown>)['consolidateAfer'] = '1h')), 'spec.disruption.consolidateAfer', 'did you mean "consolidateAfter"'],
    ['case slip', tweak((d) => ((d.spec['disruption'] as Record<string, unknown>)['ConsolidationPolicy'] = 'WhenEmpty')), 'spec.disruption.ConsolidationPolicy', 'did you mean "consolidationPolicy"'],
    ['misspelled requirements', tweak((d) => (d.spec['template'] as { spec: Record<string, unknown> }).spec['requirments'] = []), 'spec.template.spec.requirments', 'did you mean "requirements"'],
    ['a word far from any field', tweak((d) => (d.spec['autoscale'] = true)), 'spec.autoscale', "Karpenter v1.14's NodePool has no such field"],
    ['inside a requirement', tweak((d) => (d.spec['template'] as { spec: Record<string, unknown> }).spec['requirements'] = [{ key: 'a', operator: 'Exists', minValue: 2 }]), 'spec.template.spec.requirements[0].minValue', 'did you mean "minValues"'],
    ['inside a budget', tweak((d) => ((d.spec['disruption'] as Record<string, unknown>)['budgets'] = [{ nodes: '1', reason: ['Empty'] }])), 'spec.disruption.budgets[0].reason', 'did you mean "reasons"'],
    ['inside a taint', tweak((d) => (d.spec['template'] as { spec: Record<string, unknown> }).spec['taints'] = [{ key: 'a', effect: 'NoSchedule', efect: 'x' }]), 'spec.template.spec.taints[0].efect', 'did you mean "effect"'],
    ['in the template metadata', tweak((d) => ((d.spec['template'] as { metadata: Record<string, unknown> }).metadata['label'] = {})), 'spec.template.metadata.label', 'did you mean "labels"'],
    ['in metadata', tweak((d) => (d.metadata['lables'] = {})), 'metadata.lables', 'did you mean "labels"'],
    ['at the top', tweak((d) => ((d as Record<string, unknown>)['specs'] = {})), 'specs', 'did you mean "spec"'],
    ['v1beta1 expireAfter place', tweak((d) => ((d.spec['disruption'] as Record<string, unknown>)['expireAfter'] = '1h')), 'spec.disruption.expireAfter', 'moved to spec.template.spec.expireAfter'],
    ['kubelet', tweak((d) => ((d.spec['template'] as { spec: Record<string, unknown> }).spec['kubelet'] = { maxPods: 20 })), 'spec.template.spec.kubelet', 'moved to the EC2NodeClass'],
    [
      'in the handover annotation',
      tweak((d) => (d.metadata['annotations'] = { [HANDOVER_ANNOTATION]: '{"consolidateAfer":"1m"}' })),
      `metadata.annotations["${HANDOVER_ANNOTATION}"].consolidateAfer`,
      'did you mean "consolidateAfter"',
    ],
  ])('%s', (_name, doc, field, problem) => {
    expectInputError(() => parseNodePools([doc]), NP, field, problem);
  });

  it('a typo in the handover annotation does not claim the API server would refuse it (it never reads annotation values)', () => {
    const doc = tweak((d) => (d.metadata['annotations'] = { [HANDOVER_ANNOTATION]: '{"budget":[]}' }));
    expectInputError(() => parseNodePools([doc]), NP, `metadata.annotations["${HANDOVER_ANNOTATION}"].budget`, 'did you mean "budgets"');
    expect(() => parseNodePools([doc])).toThrow(/the API server does not\)$/);
    expect(() => parseNodePools([doc])).not.toThrow(/API server would refuse/);
  });

  it('accepts what Karpenter knows and this product does not use: status, metadata internals, node class, termination grace', () => {
    const doc = tweak((d) => {
      Object.assign(d.metadata, { uid: 'u', resourceVersion: '7', generation: 3, creationTimestamp: '2026-01-01T00:00:00Z', finalizers: ['x'], managedFields: [{ manager: 'kubectl' }] });
      Object.assign((d.spec['template'] as { spec: Record<string, unknown> }).spec, {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        terminationGracePeriod: '1h',
        startupTaints: [{ key: 'a', effect: 'NoSchedule' }],
      });
      (d as Record<string, unknown>)['status'] = { conditions: [], nodes: 2, anythingNewer: { x: 1 } };
    });
    expect(parseNodePools([doc]).map((p) => p.name)).toEqual(['p']);
  });
});

describe('CRD rules beyond the shape', () => {
  it.each([
    ['a karpenter.sh requirement key', tweak((d) => ((d.spec['template'] as { spec: Record<string, unknown> }).spec['requirements'] = [{ key: 'karpenter.sh/custom', operator: 'Exists' }])), 'spec.template.spec.requirements[0].key', 'label domain is restricted'],
    ['a subdomain of karpenter.sh', tweak((d) => ((d.spec['template'] as { spec: Record<string, unknown> }).spec['requirements'] = [{ key: 'x.karpenter.sh/custom', operator: 'Exists' }])), 'spec.template.spec.requirements[0].key', 'label domain is restricted'],
    ['hostname label in the template', tweak((d) => ((d.spec['template'] as { metadata: Record<string, unknown> }).metadata['labels'] = { 'kubernetes.io/hostname': 'x' })), 'spec.template.metadata.labels["kubernetes.io/hostname"]', 'is restricted'],
    ['51 budgets', tweak((d) => ((d.spec['disruption'] as Record<string, unknown>)['budgets'] = Array.from({ length: 51 }, () => ({ nodes: '1' })))), 'spec.disruption.budgets', 'at most 50'],
    ['101 requirements', tweak((d) => ((d.spec['template'] as { spec: Record<string, unknown> }).spec['requirements'] = Array.from({ length: 101 }, (_, i) => ({ key: `k${i}`, operator: 'Exists' })))), 'spec.template.spec.requirements', 'at most 100'],
    ['replicas not an integer', tweak((d) => (d.spec['replicas'] = '3')), 'spec.replicas', 'must be an integer'],
    ['an unknown operator lists the v1.14 ones', tweak((d) => ((d.spec['template'] as { spec: Record<string, unknown> }).spec['requirements'] = [{ key: 'a', operator: 'Like', values: ['1'] }])), 'spec.template.spec.requirements[0].operator', 'must be one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte'],
  ])('%s', (_name, doc, field, problem) => {
    expectInputError(() => parseNodePools([doc]), NP, field, problem);
  });

  it('Gte and Lte belong to NodePools only: a pod\'s node affinity may not use them', () => {
    expectInputError(() => parseRequirement(new Fields('Pod default/a'), { key: 'a', operator: 'Gte', values: ['1'] }, 'spec.affinity', 'kubernetes'), 'Pod default/a', 'spec.affinity.operator', 'must be one of In, NotIn, Exists, DoesNotExist, Gt, Lt');
  });

  it('karpenter.sh/capacity-type stays allowed as a requirement key', () => {
    const doc = tweak((d) => ((d.spec['template'] as { spec: Record<string, unknown> }).spec['requirements'] = [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }]));
    expect(parseNodePools([doc])[0]!.requirements).toEqual([{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }]);
  });

  it('a static pool is marked, and Karpenter is known not to consolidate it', () => {
    const [p] = parseNodePools([tweak((d) => (d.spec['replicas'] = 0))]);
    expect({ replicas: p!.replicas, karpenterConsolidates: p!.karpenterConsolidates }).toEqual({ replicas: 0, karpenterConsolidates: false });
  });
});

describe('objects served by the cluster API', () => {
  it('are not refused for fields a newer Karpenter CRD may have added (the API server checked them)', () => {
    const doc = tweak((d) => ((d.spec['disruption'] as Record<string, unknown>)['futureKnob'] = 'x'));
    expect(() => parseNodePools([doc])).toThrow(/futureKnob: unknown field/);
    expect(parseNodePools([doc], { fromApiServer: true }).map((p) => p.name)).toEqual(['p']);
  });
});
