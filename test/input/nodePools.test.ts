// NodePools (docs/file-formats.md, "The NodePools"; Karpenter's disruption-controls design): defaults
// and every validation rule (strictness: nodePoolStrict.test.ts).
import { describe, expect, it } from 'vitest';
import { defaultNodePool, parseNodePools } from '../../src/core/input/nodePools.ts';
import { expectInputError } from './helpers.ts';

const ON_DEMAND_ONLY = { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] };

/** A NodePool document; `disruption`, `templateSpec` and `spec` extras merge in. */
function pool(
  options: { name?: string; disruption?: Record<string, unknown>; templateSpec?: Record<string, unknown>; spec?: Record<string, unknown>; metadata?: Record<string, unknown>; apiVersion?: string } = {},
): Record<string, unknown> {
  return {
    apiVersion: options.apiVersion ?? 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: options.name ?? 'default', ...options.metadata },
    spec: {
      template: { spec: { requirements: [], ...options.templateSpec } },
      ...(options.disruption ? { disruption: options.disruption } : {}),
      ...options.spec,
    },
  };
}

const parseOne = (doc: unknown) => {
  const [parsed] = parseNodePools([doc]);
  if (!parsed) throw new Error('no pool parsed');
  return parsed;
};

describe('defaults', () => {
  it('a bare NodePool gets every default', () => {
    // Karpenter would consolidate it too (consolidateAfter is not Never): coexistence.ts reads that.
    expect(parseOne({ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: 'default' }, spec: {} })).toEqual({ ...defaultNodePool(), karpenterConsolidates: true });
  });

  it('defaultNodePool()', () => {
    expect(defaultNodePool()).toEqual({
      name: 'default',
      weight: 0,
      templateLabels: {},
      templateTaints: [],
      requirements: [ON_DEMAND_ONLY],
      expireAfterMs: 720 * 3_600_000,
      consolidationPolicy: 'WhenEmptyOrUnderutilized',
      consolidateAfterMs: 15_000,
      consolidationGracePeriodMs: null,
      savingsThresholdCents: 0,
      budgets: [{ nodes: { percent: 10 } }],
      limits: {},
    });
  });

  it('adds the on-demand requirement only when no capacity-type requirement exists', () => {
    const arch = { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] };
    expect(parseOne(pool({ templateSpec: { requirements: [arch] } })).requirements).toEqual([arch, ON_DEMAND_ONLY]);
    const spot = { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] };
    expect(parseOne(pool({ templateSpec: { requirements: [spot] } })).requirements).toEqual([spot]);
    const notSpot = { key: 'karpenter.sh/capacity-type', operator: 'NotIn', values: ['spot'] };
    expect(parseOne(pool({ templateSpec: { requirements: [notSpot] } })).requirements).toEqual([notSpot]);
  });

  it.each([
    ['Never disables consolidateAfter', { consolidateAfter: 'Never' }, 'consolidateAfterMs', null],
    ['consolidateAfter 0s', { consolidateAfter: '0s' }, 'consolidateAfterMs', 0],
    ['consolidateAfter 1h30m', { consolidateAfter: '1h30m' }, 'consolidateAfterMs', 5_400_000],
    ['grace period set', { consolidationGracePeriod: '2h' }, 'consolidationGracePeriodMs', 7_200_000],
    ['grace period Never', { consolidationGracePeriod: 'Never' }, 'consolidationGracePeriodMs', null],
    ['threshold as text', { consolidationSavingsThresholdCents: '0.5' }, 'savingsThresholdCents', 0.5],
    ['threshold as a number', { consolidationSavingsThresholdCents: 2 }, 'savingsThresholdCents', 2],
    ['threshold zero', { consolidationSavingsThresholdCents: '0' }, 'savingsThresholdCents', 0],
    ['policy WhenEmpty', { consolidationPolicy: 'WhenEmpty' }, 'consolidationPolicy', 'WhenEmpty'],
    ['policy WhenUnderutilized', { consolidationPolicy: 'WhenUnderutilized' }, 'consolidationPolicy', 'WhenUnderutilized'],
    ['policy WhenCheaper', { consolidationPolicy: 'WhenCheaper' }, 'consolidationPolicy', 'WhenCheaper'],
    ['policy WhenUnderutilizedOrCheaper', { consolidationPolicy: 'WhenUnderutilizedOrCheaper' }, 'consolidationPolicy', 'WhenUnderutilizedOrCheaper'],
    ['explicit empty budgets stay empty', { budgets: [] }, 'budgets', []],
  ])('%s', (_name, disruption, key, expected) => {
    expect(parseOne(pool({ disruption }))[key as keyof ReturnType<typeof parseOne>]).toEqual(expected);
  });

  it.each([
    ['v1 template field', pool({ templateSpec: { expireAfter: '24h' } }), 86_400_000],
    ['v1 Never', pool({ templateSpec: { expireAfter: 'Never' } }), null],
    ['absent: 720h', pool(), 2_592_000_000],
  ])('expireAfter: %s', (_name, doc, expected) => {
    expect(parseOne(doc).expireAfterMs).toBe(expected);
  });
});

describe('budgets', () => {
  it.each([
    ['percent', { nodes: '10%' }, { nodes: { percent: 10 } }],
    ['100%', { nodes: '100%' }, { nodes: { percent: 100 } }],
    ['0%', { nodes: '0%' }, { nodes: { percent: 0 } }],
    ['count as text', { nodes: '5' }, { nodes: { count: 5 } }],
    ['count as a number', { nodes: 0 }, { nodes: { count: 0 } }],
    ['nodes absent: 10%', {}, { nodes: { percent: 10 } }],
    [
      'schedule and duration',
      { nodes: 0, schedule: '0 9 * * mon-fri', duration: '8h' },
      { nodes: { count: 0 }, schedule: '0 9 * * mon-fri', durationMs: 28_800_000 },
    ],
    ['macro expanded', { nodes: 1, schedule: '@daily', duration: '1h30m' }, { nodes: { count: 1 }, schedule: '0 0 * * *', durationMs: 5_400_000 }],
    ['@midnight', { nodes: 1, schedule: '@midnight', duration: '10m' }, { nodes: { count: 1 }, schedule: '0 0 * * *', durationMs: 600_000 }],
    ['@hourly', { nodes: 1, schedule: '@hourly', duration: '10m' }, { nodes: { count: 1 }, schedule: '0 * * * *', durationMs: 600_000 }],
    ['Go printed duration', { nodes: 1, schedule: '@weekly', duration: '1h30m0s' }, { nodes: { count: 1 }, schedule: '0 0 * * 0', durationMs: 5_400_000 }],
    ['reasons', { nodes: '20%', reasons: ['Empty', 'Drifted'] }, { nodes: { percent: 20 }, reasons: ['Empty', 'Drifted'] }],
    ['empty reasons mean all', { nodes: '20%', reasons: [] }, { nodes: { percent: 20 } }],
  ])('%s', (_name, budget, expected) => {
    expect(parseOne(pool({ disruption: { budgets: [budget] } })).budgets).toEqual([expected]);
  });
});

describe('other fields', () => {
  it('reads weight, template labels and taints, requirements, limits and launch settings', () => {
    const parsed = parseOne(
      pool({
        metadata: { annotations: { 'eks-consolidator/launch-template': 'lt-123', 'other/annotation': 'x' } },
        spec: {
          weight: 50,
          limits: { cpu: '1000', memory: '1000Gi' },
          template: {
            metadata: { labels: { team: 'a' } },
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
              taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }, { key: 'x', effect: 'NoExecute' }],
              requirements: [
                { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] },
                { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm'] },
                { key: 'example.com/ssd', operator: 'Exists' },
                { key: 'topology.kubernetes.io/zone', operator: 'NotIn', values: [] },
              ],
            },
          },
        },
      }),
    );
    expect(parsed.weight).toBe(50);
    expect(parsed.limits).toEqual({ cpu: 1_000_000, memory: 1000 * 1024 ** 3 });
    expect(parsed.templateLabels).toEqual({ team: 'a' });
    expect(parsed.templateTaints).toEqual([
      { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
      { key: 'x', effect: 'NoExecute' },
    ]);
    expect(parsed.requirements).toEqual([
      { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] },
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm'] },
      { key: 'example.com/ssd', operator: 'Exists', values: [] },
      { key: 'topology.kubernetes.io/zone', operator: 'NotIn', values: [] },
      ON_DEMAND_ONLY,
    ]);
    expect(parsed.launch).toEqual({
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      'eks-consolidator/launch-template': 'lt-123',
    });
  });

  it('leaves launch out when there is nothing to launch with', () => {
    expect(parseOne(pool())).not.toHaveProperty('launch');
  });

  it('skips other kinds and empty documents, and flattens Lists', () => {
    const pools = parseNodePools([
      null,
      { apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', metadata: { name: 'default' } },
      { apiVersion: 'v1', kind: 'List', items: [pool({ name: 'a' }), pool({ name: 'b' })] },
    ]);
    expect(pools.map((p) => p.name)).toEqual(['a', 'b']);
  });

  it('accepts a typed NodePoolList whose items leave out their kind', () => {
    const { kind: _kind, ...withoutKind } = pool({ name: 'a' });
    expect(parseNodePools([{ kind: 'NodePoolList', items: [withoutKind] }]).map((p) => p.name)).toEqual(['a']);
  });
});

describe('validation', () => {
  const budget = (b: unknown) => pool({ disruption: { budgets: [b] } });
  const requirement = (r: unknown) => pool({ templateSpec: { requirements: [r] } });
  const NP = 'NodePool "default"';

  it.each([
    ['negative budget (text)', budget({ nodes: '-1' }), NP, 'spec.disruption.budgets[0].nodes', 'non-negative'],
    ['negative budget (number)', budget({ nodes: -1 }), NP, 'spec.disruption.budgets[0].nodes', 'non-negative'],
    ['percent over 100', budget({ nodes: '101%' }), NP, 'spec.disruption.budgets[0].nodes', '0% to 100%'],
    ['fractional count', budget({ nodes: 1.5 }), NP, 'spec.disruption.budgets[0].nodes', 'non-negative'],
    ['word', budget({ nodes: 'all' }), NP, 'spec.disruption.budgets[0].nodes', 'non-negative'],
    ['schedule without duration', budget({ nodes: 0, schedule: '@daily' }), NP, 'spec.disruption.budgets[0]', 'schedule requires duration'],
    ['duration without schedule', budget({ nodes: 0, duration: '1h' }), NP, 'spec.disruption.budgets[0]', 'duration requires schedule'],
    ['seconds in a budget duration', budget({ nodes: 0, schedule: '@daily', duration: '30s' }), NP, 'spec.disruption.budgets[0].duration', 'whole hours and minutes'],
    ['fractional budget duration', budget({ nodes: 0, schedule: '@daily', duration: '1.5h' }), NP, 'spec.disruption.budgets[0].duration', 'whole hours and minutes'],
    ['bad budget duration', budget({ nodes: 0, schedule: '@daily', duration: 'soon' }), NP, 'spec.disruption.budgets[0].duration', 'not a duration'],
    ['six-field cron', budget({ nodes: 0, schedule: '0 0 9 * * *', duration: '1h' }), NP, 'spec.disruption.budgets[0].schedule', 'expected 5 fields'],
    ['four-field cron', budget({ nodes: 0, schedule: '0 9 * *', duration: '1h' }), NP, 'spec.disruption.budgets[0].schedule', 'expected 5 fields'],
    ['out-of-range minute', budget({ nodes: 0, schedule: '61 * * * *', duration: '1h' }), NP, 'spec.disruption.budgets[0].schedule', 'not a valid cron schedule'],
    ['unknown macro', budget({ nodes: 0, schedule: '@sometimes', duration: '1h' }), NP, 'spec.disruption.budgets[0].schedule', 'expected 5 fields'],
    ['time zone', budget({ nodes: 0, schedule: 'TZ=Europe/Paris 0 9 * * *', duration: '1h' }), NP, 'spec.disruption.budgets[0].schedule', 'time zones are not supported'],
    ['unknown reason', budget({ nodes: 1, reasons: ['Expired'] }), NP, 'spec.disruption.budgets[0].reasons[0]', 'must be one of Empty, Underutilized, Drifted'],
    ['budgets not a list', pool({ disruption: { budgets: { nodes: 1 } } }), NP, 'spec.disruption.budgets', 'must be a list'],
    ['integer policy (the Balanced RFC draft; v1.14 refuses it)', pool({ disruption: { consolidationPolicy: 2 } }), NP, 'spec.disruption.consolidationPolicy', 'no integer consolidationPolicy'],
    ['unknown policy', pool({ disruption: { consolidationPolicy: 'Sometimes' } }), NP, 'spec.disruption.consolidationPolicy', 'must be one of'],
    ['bad consolidateAfter', pool({ disruption: { consolidateAfter: '5 minutes' } }), NP, 'spec.disruption.consolidateAfter', 'not a duration'],
    ['negative consolidateAfter', pool({ disruption: { consolidateAfter: '-5m' } }), NP, 'spec.disruption.consolidateAfter', 'must not be negative'],
    ['bad grace period', pool({ disruption: { consolidationGracePeriod: 'later' } }), NP, 'spec.disruption.consolidationGracePeriod', 'not a duration'],
    ['bad expireAfter (v1)', pool({ templateSpec: { expireAfter: '30d' } }), NP, 'spec.template.spec.expireAfter', 'not a duration'],
    ['expireAfter where v1beta1 had it', pool({ disruption: { expireAfter: '30m' } }), NP, 'spec.disruption.expireAfter', 'moved to spec.template.spec.expireAfter'],
    ['negative threshold', pool({ disruption: { consolidationSavingsThresholdCents: '-1' } }), NP, 'spec.disruption.consolidationSavingsThresholdCents', 'non-negative'],
    ['negative threshold number', pool({ disruption: { consolidationSavingsThresholdCents: -0.5 } }), NP, 'spec.disruption.consolidationSavingsThresholdCents', 'non-negative'],
    ['non-numeric threshold', pool({ disruption: { consolidationSavingsThresholdCents: 'cheap' } }), NP, 'spec.disruption.consolidationSavingsThresholdCents', 'non-negative'],
    ['weight zero', pool({ spec: { weight: 0 } }), NP, 'spec.weight', 'from 1 to 100'],
    ['weight 101', pool({ spec: { weight: 101 } }), NP, 'spec.weight', 'from 1 to 100'],
    ['weight fractional', pool({ spec: { weight: 1.5 } }), NP, 'spec.weight', 'must be an integer'],
    ['In without values', requirement({ key: 'a', operator: 'In', values: [] }), NP, 'spec.template.spec.requirements[0].values', 'at least one value'],
    ['Exists with values', requirement({ key: 'a', operator: 'Exists', values: ['x'] }), NP, 'spec.template.spec.requirements[0].values', 'takes no values'],
    ['DoesNotExist with values', requirement({ key: 'a', operator: 'DoesNotExist', values: ['x'] }), NP, 'spec.template.spec.requirements[0].values', 'takes no values'],
    ['Gt with two values', requirement({ key: 'a', operator: 'Gt', values: ['1', '2'] }), NP, 'spec.template.spec.requirements[0].values', 'exactly one'],
    ['Lt with a word', requirement({ key: 'a', operator: 'Lt', values: ['ten'] }), NP, 'spec.template.spec.requirements[0].values', 'exactly one'],
    ['Gt negative', requirement({ key: 'a', operator: 'Gt', values: ['-1'] }), NP, 'spec.template.spec.requirements[0].values', 'non-negative integer'],
    ['unknown operator', requirement({ key: 'a', operator: 'Like', values: ['x'] }), NP, 'spec.template.spec.requirements[0].operator', 'must be one of'],
    ['missing key', requirement({ operator: 'Exists' }), NP, 'spec.template.spec.requirements[0].key', 'is required'],
    ['restricted key', requirement({ key: 'karpenter.sh/nodepool', operator: 'In', values: ['x'] }), NP, 'spec.template.spec.requirements[0].key', 'cannot be required'],
    ['key of 100,000 characters', requirement({ key: 'k'.repeat(100_000), operator: 'Exists' }), NP, 'spec.template.spec.requirements[0].key', 'its name is 100000 characters long, at most 63'],
    ['key with a space', requirement({ key: 'team name', operator: 'Exists' }), NP, 'spec.template.spec.requirements[0].key', 'is not a valid label key: its name must be'],
    ['key ending in a dot', requirement({ key: 'example.com/tier.', operator: 'Exists' }), NP, 'spec.template.spec.requirements[0].key', 'starting and ending with a letter or digit'],
    ['key with an upper-case prefix', requirement({ key: 'Example.com/tier', operator: 'Exists' }), NP, 'spec.template.spec.requirements[0].key', 'its prefix must be a DNS subdomain'],
    ['key with an empty prefix', requirement({ key: '/tier', operator: 'Exists' }), NP, 'spec.template.spec.requirements[0].key', 'its prefix must be a DNS subdomain'],
    ['key with a prefix of 254 characters', requirement({ key: `${'a'.repeat(254)}/tier`, operator: 'Exists' }), NP, 'spec.template.spec.requirements[0].key', 'its prefix is 254 characters long'],
    ['emoji name', pool({ name: '🚀' }), 'NodePool "🚀"', 'metadata.name', 'is not a DNS subdomain name'],
    ['upper-case name', pool({ name: 'General' }), 'NodePool "General"', 'metadata.name', 'is not a DNS subdomain name'],
    ['name of 254 characters', pool({ name: 'a'.repeat(254) }), `NodePool "${'a'.repeat(80)}... (174 more characters)"`, 'metadata.name', 'at most 253'],
    ['bad taint effect', pool({ templateSpec: { taints: [{ key: 'a', effect: 'NoWay' }] } }), NP, 'spec.template.spec.taints[0].effect', 'must be one of NoSchedule'],
    ['taint without key', pool({ templateSpec: { taints: [{ effect: 'NoSchedule' }] } }), NP, 'spec.template.spec.taints[0].key', 'is required'],
    ['label not a string', pool({ spec: { template: { metadata: { labels: { a: 1 } } } } }), NP, 'spec.template.metadata.labels.a', 'must be a string'],
    ['bad limit', pool({ spec: { limits: { cpu: 'lots' } } }), NP, 'spec.limits.cpu', 'not a Kubernetes quantity'],
    ['unknown apiVersion', pool({ apiVersion: 'karpenter.sh/v1alpha5' }), NP, 'apiVersion', 'not supported'],
    ['missing name', { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: {}, spec: {} }, 'NodePool (document 1)', 'metadata.name', 'is required'],
    ['missing metadata', { apiVersion: 'karpenter.sh/v1', kind: 'NodePool', spec: {} }, 'NodePool (document 1)', 'metadata', 'is required'],
    ['document without kind', { metadata: { name: 'x' } }, 'document 1', 'kind', 'is required'],
    ['document not an object', 'NodePool', 'document 1', '', 'must be an object'],
  ])('%s', (_name, doc, object, field, problem) => {
    expectInputError(() => parseNodePools([doc]), object, field, problem);
  });

  it.each([
    ['a plain key', 'tier'],
    ['a prefixed key', 'node.kubernetes.io/instance-type'],
    ['a name of 63 characters with dots, dashes and underscores', `example.com/${'a'.repeat(30)}_-.${'b'.repeat(30)}`],
  ])('accepts %s as a requirement key', (_case, key) => {
    expect(parseOne(requirement({ key, operator: 'Exists' })).requirements[0]?.key).toBe(key);
  });

  it('rejects duplicate pool names', () => {
    expectInputError(() => parseNodePools([pool({ name: 'a' }), pool({ name: 'a' })]), 'NodePool "a"', 'metadata.name', 'duplicate NodePool name');
  });

  it('the negative budget message reads well end to end', () => {
    const error = expectInputError(() => parseNodePools([budget({ nodes: '-1' })]), NP, 'spec.disruption.budgets[0].nodes', '"-1"');
    expect(error.message).toMatch(/^NodePool "default": spec\.disruption\.budgets\[0\]\.nodes: "-1" must be/);
  });
});
