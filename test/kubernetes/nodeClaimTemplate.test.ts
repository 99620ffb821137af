// The NodeClaim a replacement becomes, built from its NodePool as Karpenter's provisioner builds one
// (provisioning/scheduling/nodeclaimtemplate.go): every copied field, the narrowing to the planned
// launch, minValues, the hash annotations Karpenter's drift check compares, and the deterministic name
// that makes a repeated create meet the first claim.
import { describe, expect, it } from 'vitest';
import {
  MAX_INSTANCE_TYPES,
  MIN_VALUES_RELAXED_ANNOTATION,
  buildNodeClaim,
  byteQuantity,
  cpuQuantity,
  nodeClaimName,
  nodeClassLabelKey,
  resourceRequests,
  type NodeClaimRequirement,
} from '../../src/adapters/kubernetes/nodeClaimTemplate.ts';
import { parseNodePools } from '../../src/core/input/nodePools.ts';
import type { NodeClaimTemplateSource, NodePool } from '../../src/core/model/types.ts';
import { NODECLAIM_COMMAND_ANNOTATION, NODECLAIM_INDEX_ANNOTATION, type NodeClaimRequest } from '../../src/core/ports/actuator.ts';
import type { PlannedReplacement } from '../../src/core/plan.ts';
import { nodePool } from '../builders.ts';

const SOURCE: NodeClaimTemplateSource = {
  nodePoolUid: 'pool-uid-1',
  annotations: { 'example.org/contact': 'platform' },
  hashAnnotations: { 'karpenter.sh/nodepool-hash': '6821555240594823858', 'karpenter.sh/nodepool-hash-version': 'v3' },
  startupTaints: [{ key: 'example.org/warming', effect: 'NoSchedule' }],
  nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'standard' },
  expireAfter: '336h',
  terminationGracePeriod: '24h',
  requirements: [
    { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
    { key: 'node.kubernetes.io/instance-type', operator: 'Exists', minValues: 3 },
    { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
    { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
  ],
};

const pool = (overrides: Partial<NodePool> = {}, source: Partial<NodeClaimTemplateSource> = {}): NodePool =>
  nodePool({
    name: 'general',
    templateLabels: { team: 'web' },
    templateTaints: [{ key: 'example.org/dedicated', value: 'web', effect: 'NoSchedule' }],
    nodeClaimTemplate: { ...SOURCE, ...source },
    ...overrides,
  });

const replacement = (overrides: Partial<PlannedReplacement> = {}): PlannedReplacement => ({
  instanceTypes: ['m5.large', 'c5.large', 'r5.large', 'm5.xlarge'],
  capacityType: 'spot',
  zones: ['us-east-1a', 'us-east-1b'],
  pricePerHour: 0.04,
  nodePool: 'general',
  worstPricePerHour: 0.06,
  ...overrides,
});

const request = (overrides: Partial<NodeClaimRequest> = {}): NodeClaimRequest => ({
  commandId: 'cmd-20260101-0001',
  index: 0,
  nodePool: pool(),
  replacement: replacement(),
  requests: { cpu: 1500, memory: 3 * 1024 ** 3, pods: 12 },
  ...overrides,
});

const requirementOf = (claim: ReturnType<typeof buildNodeClaim>, key: string): NodeClaimRequirement | undefined =>
  claim.spec.requirements.find((r) => r.key === key);

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

describe('buildNodeClaim: what the NodeClaim copies from its NodePool', () => {
  const claim = buildNodeClaim(request());

  it('is a karpenter.sh/v1 NodeClaim', () => {
    expect([claim.apiVersion, claim.kind]).toEqual(['karpenter.sh/v1', 'NodeClaim']);
  });

  it.each([
    ['the template labels', 'team', 'web'],
    ['the pool label', 'karpenter.sh/nodepool', 'general'],
    ['the node class label (NodeClassLabelKey: group / lower-case kind)', 'karpenter.k8s.aws/ec2nodeclass', 'standard'],
  ])('labels: %s', (_name, key, value) => {
    expect(claim.metadata.labels[key]).toBe(value);
  });

  it.each([
    ['the template annotations', 'example.org/contact', 'platform'],
    ['the pool hash (drift compares it)', 'karpenter.sh/nodepool-hash', '6821555240594823858'],
    ['the pool hash version', 'karpenter.sh/nodepool-hash-version', 'v3'],
    ['our command', NODECLAIM_COMMAND_ANNOTATION, 'cmd-20260101-0001'],
    ['the replacement index', NODECLAIM_INDEX_ANNOTATION, '0'],
    ['minValues not relaxed (types offered cover it)', MIN_VALUES_RELAXED_ANNOTATION, 'false'],
  ])('annotations: %s', (_name, key, value) => {
    expect(claim.metadata.annotations[key]).toBe(value);
  });

  it('is owned by its NodePool, blocking the pool deletion until it is gone', () => {
    expect(claim.metadata.ownerReferences).toEqual([{ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', name: 'general', uid: 'pool-uid-1', blockOwnerDeletion: true }]);
  });

  it.each([
    ['taints from the template', 'taints', [{ key: 'example.org/dedicated', value: 'web', effect: 'NoSchedule' }]],
    ['startup taints', 'startupTaints', [{ key: 'example.org/warming', effect: 'NoSchedule' }]],
    ['the node class reference', 'nodeClassRef', { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'standard' }],
    ['expireAfter as written', 'expireAfter', '336h'],
    ['terminationGracePeriod as written', 'terminationGracePeriod', '24h'],
    ['the summed requests as quantities', 'resources', { requests: { cpu: '1500m', memory: '3072Mi', pods: '12' } }],
  ])('spec: %s', (_name, field, expected) => {
    expect(claim.spec[field as keyof typeof claim.spec]).toEqual(expected);
  });

  it('keeps the requirements it does not narrow as written, in order, and adds one per label', () => {
    expect(claim.spec.requirements).toEqual([
      { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
      { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large', 'c5.large', 'r5.large', 'm5.xlarge'], minValues: 3 },
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
      { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a', 'us-east-1b'] },
      { key: 'team', operator: 'In', values: ['web'] },
      { key: 'karpenter.sh/nodepool', operator: 'In', values: ['general'] },
      { key: 'karpenter.k8s.aws/ec2nodeclass', operator: 'In', values: ['standard'] },
    ]);
  });
});

describe('buildNodeClaim: fields written only when set', () => {
  it.each([
    ['no owner reference without the pool uid', { nodePoolUid: undefined }, (c: ReturnType<typeof buildNodeClaim>) => expect(c.metadata).not.toHaveProperty('ownerReferences')],
    ['no terminationGracePeriod when unset (Karpenter defaults it to nil)', { terminationGracePeriod: undefined }, (c: ReturnType<typeof buildNodeClaim>) => expect(c.spec).not.toHaveProperty('terminationGracePeriod')],
    ['no expireAfter when unset (the CRD defaults it)', { expireAfter: undefined }, (c: ReturnType<typeof buildNodeClaim>) => expect(c.spec).not.toHaveProperty('expireAfter')],
    ['no startupTaints when none', { startupTaints: [] }, (c: ReturnType<typeof buildNodeClaim>) => expect(c.spec).not.toHaveProperty('startupTaints')],
    [
      'no hash annotations when the pool has none (Karpenter then skips static drift)',
      { hashAnnotations: {} },
      (c: ReturnType<typeof buildNodeClaim>) => expect(Object.keys(c.metadata.annotations).filter((k) => k.startsWith('karpenter.sh/nodepool-hash'))).toEqual([]),
    ],
    ['Never kept as written', { expireAfter: 'Never' }, (c: ReturnType<typeof buildNodeClaim>) => expect(c.spec.expireAfter).toBe('Never')],
  ])('%s', (_name, source, check) => {
    const p = pool({}, source as Partial<NodeClaimTemplateSource>);
    const template = { ...p.nodeClaimTemplate! };
    for (const [key, value] of Object.entries(source)) if (value === undefined) delete (template as Record<string, unknown>)[key];
    check(buildNodeClaim(request({ nodePool: { ...p, nodeClaimTemplate: template } })));
  });

  it('writes no taints when the template has none', () => {
    expect(buildNodeClaim(request({ nodePool: pool({ templateTaints: [] }) })).spec).not.toHaveProperty('taints');
  });

  it('a hash annotation wins over a template annotation of the same key', () => {
    const p = pool({}, { annotations: { 'karpenter.sh/nodepool-hash': 'stale' } });
    expect(buildNodeClaim(request({ nodePool: p })).metadata.annotations['karpenter.sh/nodepool-hash']).toBe('6821555240594823858');
  });
});

describe('buildNodeClaim: narrowing to the planned launch', () => {
  it.each<[string, Partial<PlannedReplacement>, Partial<NodeClaimTemplateSource>, string, NodeClaimRequirement | undefined]>([
    ['instance types replaced by the planned ones, cheapest first', { instanceTypes: ['c6g.large', 'm6g.large'] }, {}, 'node.kubernetes.io/instance-type', { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['c6g.large', 'm6g.large'], minValues: 2 }],
    ['capacity type narrowed to the planned one', { capacityType: 'on-demand' }, {}, 'karpenter.sh/capacity-type', { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
    ['zones narrowed when planned', { zones: ['us-east-1c'] }, {}, 'topology.kubernetes.io/zone', { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1c'] }],
    ['no zone requirement added when none planned', { zones: [] }, {}, 'topology.kubernetes.io/zone', undefined],
    [
      'a written zone requirement kept when no zone is planned',
      { zones: [] },
      { requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'NotIn', values: ['us-east-1e'] }] },
      'topology.kubernetes.io/zone',
      { key: 'topology.kubernetes.io/zone', operator: 'NotIn', values: ['us-east-1e'] },
    ],
    [
      'a written zone requirement replaced when zones are planned',
      { zones: ['us-east-1a'] },
      { requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'NotIn', values: ['us-east-1e'] }] },
      'topology.kubernetes.io/zone',
      { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] },
    ],
    ['instance types added when the pool wrote none', {}, { requirements: [] }, 'node.kubernetes.io/instance-type', { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large', 'c5.large', 'r5.large', 'm5.xlarge'] }],
    ['capacity type added when the pool wrote none', {}, { requirements: [] }, 'karpenter.sh/capacity-type', { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
    [
      'a minValues on another key kept as written',
      {},
      { requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'Exists', minValues: 2 }] },
      'karpenter.k8s.aws/instance-family',
      { key: 'karpenter.k8s.aws/instance-family', operator: 'Exists', minValues: 2 },
    ],
  ])('%s', (_name, planned, source, key, expected) => {
    const claim = buildNodeClaim(request({ nodePool: pool({}, source), replacement: replacement(planned) }));
    expect(requirementOf(claim, key)).toEqual(expected);
    expect(claim.spec.requirements.filter((r) => r.key === key).length).toBe(expected === undefined ? 0 : 1);
  });

  it(`sends at most ${MAX_INSTANCE_TYPES} instance types, the cheapest (first) ones, as Karpenter does`, () => {
    const many = Array.from({ length: 750 }, (_, i) => `t${i}.large`);
    const values = requirementOf(buildNodeClaim(request({ replacement: replacement({ instanceTypes: many }) })), 'node.kubernetes.io/instance-type')!.values!;
    expect(values.length).toBe(MAX_INSTANCE_TYPES);
    expect(values[0]).toBe('t0.large');
    expect(values.at(-1)).toBe('t599.large');
  });

  it.each([
    ['kept when enough types are offered', 5, 3, 3, 'false'],
    ['capped at the number of types offered', 2, 3, 2, 'true'],
    ['capped at a single type', 1, 50, 1, 'true'],
  ])('instance-type minValues %s', (_name, offered, written, expected, relaxed) => {
    const claim = buildNodeClaim(
      request({
        nodePool: pool({}, { requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'Exists', minValues: written }] }),
        replacement: replacement({ instanceTypes: Array.from({ length: offered }, (_, i) => `m${i}.large`) }),
      }),
    );
    expect(requirementOf(claim, 'node.kubernetes.io/instance-type')!.minValues).toBe(expected);
    expect(claim.metadata.annotations[MIN_VALUES_RELAXED_ANNOTATION]).toBe(relaxed);
  });

  it('writes no minValues on instance types when the pool had none', () => {
    const claim = buildNodeClaim(request({ nodePool: pool({}, { requirements: [] }) }));
    expect(requirementOf(claim, 'node.kubernetes.io/instance-type')).not.toHaveProperty('minValues');
  });
});

describe('buildNodeClaim: custom labels Karpenter resolves from the requirements', () => {
  const withRequirements = (requirements: NodeClaimTemplateSource['requirements'], index = 0) =>
    buildNodeClaim(request({ index, nodePool: pool({ templateLabels: {} }, { requirements }) })).metadata.labels;

  it.each<[string, NodeClaimTemplateSource['requirements'], string, string | undefined]>([
    ['In with one value: that value', [{ key: 'example.org/tier', operator: 'In', values: ['gold'] }], 'example.org/tier', 'gold'],
    ['In with several: the first written', [{ key: 'example.org/tier', operator: 'In', values: ['gold', 'silver'] }], 'example.org/tier', 'gold'],
    [
      'In narrowed by NotIn: the first allowed',
      [
        { key: 'example.org/tier', operator: 'In', values: ['gold', 'silver'] },
        { key: 'example.org/tier', operator: 'NotIn', values: ['gold'] },
      ],
      'example.org/tier',
      'silver',
    ],
    ['DoesNotExist: no label', [{ key: 'example.org/tier', operator: 'DoesNotExist' }], 'example.org/tier', undefined],
    ['a well-known key: left to the launch', [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }], 'kubernetes.io/arch', undefined],
    ['an AWS provider key: left to the launch', [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m5'] }], 'karpenter.k8s.aws/instance-family', undefined],
  ])('%s', (_name, requirements, key, expected) => {
    expect(withRequirements(requirements)[key]).toBe(expected);
  });

  it('Exists and bounds: an integer in bounds, stable for the claim, different between claims', () => {
    const requirements: NodeClaimTemplateSource['requirements'] = [
      { key: 'example.org/slot', operator: 'Gt', values: ['10'] },
      { key: 'example.org/slot', operator: 'Lte', values: ['1000'] },
    ];
    const values = [0, 1, 2, 3, 4].map((i) => withRequirements(requirements, i)['example.org/slot']!);
    for (const value of values) {
      expect(Number(value)).toBeGreaterThan(10);
      expect(Number(value)).toBeLessThanOrEqual(1000);
    }
    expect(withRequirements(requirements, 0)['example.org/slot']).toBe(values[0]);
    expect(new Set(values).size).toBeGreaterThan(1);
    expect(withRequirements([{ key: 'example.org/any', operator: 'Exists' }])['example.org/any']).toMatch(/^\d+$/);
  });

  it('a template label wins over its requirement', () => {
    const labels = buildNodeClaim(request({ nodePool: pool({ templateLabels: { 'example.org/tier': 'gold' } }, { requirements: [{ key: 'example.org/tier', operator: 'Exists' }] }) }))
      .metadata.labels;
    expect(labels['example.org/tier']).toBe('gold');
  });
});

describe('nodeClaimName', () => {
  it('is deterministic in (pool, command, index) and differs when any of them does', () => {
    const name = nodeClaimName('general', 'cmd-1', 0);
    expect(nodeClaimName('general', 'cmd-1', 0)).toBe(name);
    expect(new Set([name, nodeClaimName('general', 'cmd-1', 1), nodeClaimName('general', 'cmd-2', 0), nodeClaimName('other', 'cmd-1', 0)]).size).toBe(4);
    expect(name).toMatch(/^general-[0-9a-f]{12}$/);
  });

  it.each([
    ['a 63-character pool name', 'p'.repeat(63)],
    ['a 253-character pool name', `${'a'.repeat(49)}.${'b'.repeat(200)}`],
    ['a cut landing on a dot', `${'a'.repeat(49)}.bbbb`],
    ['a cut landing on a dash', `${'a'.repeat(49)}-bbbb`],
    ['upper case and underscores (a hand-written file)', 'My_Pool'],
    ['only punctuation', '---'],
  ])('stays a DNS-1123 name of at most 63 characters for %s', (_name, poolName) => {
    const name = nodeClaimName(poolName, 'cmd-1', 3);
    expect(name.length).toBeLessThanOrEqual(63);
    expect(name).toMatch(DNS_SUBDOMAIN);
    expect(name).toMatch(/-[0-9a-f]{12}$/);
  });

  it('is the name buildNodeClaim gives the claim', () => {
    expect(buildNodeClaim(request({ index: 2 })).metadata.name).toBe(nodeClaimName('general', 'cmd-20260101-0001', 2));
  });
});

describe('quantities and labels', () => {
  it.each([
    [1500, '1500m'],
    [2000, '2'],
    [250, '250m'],
    [0, '0'],
  ])('cpu %i millicores -> %s', (cpuMillis, expected) => {
    expect(cpuQuantity(cpuMillis)).toBe(expected);
  });

  it.each([
    [3 * 1024 ** 3, '3072Mi'],
    [512 * 1024 ** 2, '512Mi'],
    [1536, '1536'],
    [4096, '4Ki'],
    [1000, '1000'],
    [0, '0'],
  ])('memory %i bytes -> %s', (memoryBytes, expected) => {
    expect(byteQuantity(memoryBytes)).toBe(expected);
  });

  it('writes every resource, rounding fractions up, and refuses a negative amount', () => {
    expect(resourceRequests({ cpu: 100.2, 'ephemeral-storage': 10 * 1024 ** 3, pods: 3, 'nvidia.com/gpu': 1 })).toEqual({
      cpu: '101m',
      'ephemeral-storage': '10240Mi',
      pods: '3',
      'nvidia.com/gpu': '1',
    });
    expect(() => resourceRequests({ cpu: -1 })).toThrow(/cpu = -1/);
  });

  it.each([
    ['karpenter.k8s.aws', 'EC2NodeClass', 'karpenter.k8s.aws/ec2nodeclass'],
    ['karpenter.azure.com', 'AKSNodeClass', 'karpenter.azure.com/aksnodeclass'],
  ])('node class label of %s %s is %s', (group, kind, expected) => {
    expect(nodeClassLabelKey({ group, kind })).toBe(expected);
  });
});

describe('refusals', () => {
  it('refuses a pool without a nodeClaimTemplate, naming it', () => {
    expect(() => buildNodeClaim(request({ nodePool: nodePool({ name: 'bare' }) }))).toThrow(/NodePool "bare" has no spec\.template\.spec\.nodeClassRef/);
  });

  it('refuses a replacement with no instance type', () => {
    expect(() => buildNodeClaim(request({ replacement: replacement({ instanceTypes: [] }) }))).toThrow(/lists no instance type/);
  });
});

describe('from a NodePool as read from YAML', () => {
  it('builds the claim Karpenter would from the parsed pool', () => {
    const [parsed] = parseNodePools([
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'batch', uid: 'u-9', annotations: { 'karpenter.sh/nodepool-hash': '42', 'karpenter.sh/nodepool-hash-version': 'v3' } },
        spec: {
          template: {
            metadata: { labels: { workload: 'batch' } },
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'batch' },
              requirements: [{ key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c'] }],
              expireAfter: '24h',
            },
          },
          disruption: { consolidateAfter: '1m' },
        },
      },
    ]);
    const claim = buildNodeClaim(request({ nodePool: parsed!, replacement: replacement({ capacityType: 'on-demand', zones: [] }) }));
    expect(claim.metadata.labels).toEqual({ workload: 'batch', 'karpenter.sh/nodepool': 'batch', 'karpenter.k8s.aws/ec2nodeclass': 'batch' });
    expect(claim.metadata.ownerReferences?.[0]?.uid).toBe('u-9');
    expect(claim.spec.requirements.map((r) => `${r.key} ${r.operator} ${(r.values ?? []).join(',')}`)).toEqual([
      'karpenter.k8s.aws/instance-category In c',
      'node.kubernetes.io/instance-type In m5.large,c5.large,r5.large,m5.xlarge',
      'karpenter.sh/capacity-type In on-demand',
      'workload In batch',
      'karpenter.sh/nodepool In batch',
      'karpenter.k8s.aws/ec2nodeclass In batch',
    ]);
    expect(claim.spec).not.toHaveProperty('taints');
    expect(claim.spec.expireAfter).toBe('24h');
  });
});
