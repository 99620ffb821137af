// The NodePools of Karpenter v1.14's documentation (concepts/nodepools, the disruption and scheduling
// pages) and of `examples/v1` in the AWS provider, rewritten here with our own names and values but
// the same shape: every field and operator they use, in the same places. Each is accepted or refused
// as the v1.14 CRD (structural schema plus its CEL rules) would treat it.
//
// Where this product is knowingly more lenient than the CRD (docs/nodepools.md, "Honoured or refused,
// never ignored"): `nodeClassRef`, `requirements` and `spec.disruption.consolidateAfter` may be left
// out, as hand-written test pools do; the defaults of docs/file-formats.md, "The NodePools", apply.
import { describe, expect, it } from 'vitest';
import { decodeDocuments } from '../../src/adapters/files/documents.ts';
import { InputError } from '../../src/core/errors.ts';
import { parseNodePools } from '../../src/core/input/nodePools.ts';

const NODE_CLASS = `
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: standard`;

/** The reference NodePool of the NodePools page: every field, placeholders resolved. */
const REFERENCE = (extraSpec = '') => `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: reference
spec:
  template:
    metadata:
      labels:
        cost-center: platform
      annotations:
        example.org/contact: "platform-team"
    spec:${NODE_CLASS}
      taints:
        - key: example.org/dedicated
          effect: NoSchedule
      startupTaints:
        - key: example.org/warming-up
          effect: NoSchedule
      expireAfter: 336h
      terminationGracePeriod: 24h
      requirements:
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: ["c", "m", "r"]
          minValues: 2
        - key: karpenter.k8s.aws/instance-family
          operator: In
          values: ["m5", "m6i", "c5", "c6i", "r5", "r6i"]
          minValues: 4
        - key: karpenter.k8s.aws/instance-cpu
          operator: In
          values: ["2", "4", "8"]
        - key: karpenter.k8s.aws/instance-hypervisor
          operator: In
          values: ["nitro"]
        - key: karpenter.k8s.aws/instance-generation
          operator: Gte
          values: ["4"]
        - key: topology.kubernetes.io/zone
          operator: In
          values: ["us-east-1a", "us-east-1b"]
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64", "arm64"]
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot", "on-demand", "reserved"]
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 2m
    budgets:
      - nodes: 20%
      - schedule: "0 8 * * mon-fri"
        duration: 10h
        nodes: "0"
${extraSpec}  limits:
    cpu: "500"
    memory: 500Gi
    nodes: 40
  weight: 20
status:
  conditions:
    - type: Ready
      status: "True"
      observedGeneration: 1
      lastTransitionTime: "2026-01-05T10:00:00Z"
      reason: Ready
      message: ""
  nodes: 3
  resources:
    cpu: "12"
    memory: 48Gi
`;

/** An EC2NodeClass as the examples keep it in the same file: not a NodePool, so skipped. */
const EC2_NODE_CLASS = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: standard
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms:
    - alias: al2023@latest
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
`;

/** The shape shared by most of `examples/v1`: a node class and OS / arch / category / generation requirements. */
const EXAMPLE = (name: string, requirements: string, extra = '') => `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: ${name}
  annotations:
    kubernetes.io/description: "example pool ${name}"
spec:
  template:
    spec:${NODE_CLASS}
      requirements:
${requirements}
${extra}---
${EC2_NODE_CLASS}`;

const req = (key: string, operator: string, values?: string[], minValues?: number) =>
  `        - key: ${key}\n          operator: ${operator}\n${values ? `          values: [${values.map((v) => JSON.stringify(v)).join(', ')}]\n` : ''}${minValues ? `          minValues: ${minValues}\n` : ''}`.trimEnd();
const LINUX_AMD64 = [req('kubernetes.io/arch', 'In', ['amd64']), req('kubernetes.io/os', 'In', ['linux'])].join('\n');
const CATEGORY_GENERATION = [req('karpenter.k8s.aws/instance-category', 'In', ['c', 'm', 'r']), req('karpenter.k8s.aws/instance-generation', 'Gt', ['2'])].join('\n');

const ACCEPTED: readonly [string, string, (pools: ReturnType<typeof parseNodePools>) => void][] = [
  ['reference NodePool (nodepools page), dynamic', REFERENCE(), ([p]) => {
    expect(p!.weight).toBe(20);
    expect(p!.requirements.find((r) => r.operator === 'Gte')).toEqual({ key: 'karpenter.k8s.aws/instance-generation', operator: 'Gte', values: ['4'] });
    expect(p!.requirements.filter((r) => r.minValues !== undefined).map((r) => r.minValues)).toEqual([2, 4]);
  }],
  ['static pool with a node limit and a drift budget (nodepools page)', `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: fixed
spec:
  replicas: 6
  template:
    spec:${NODE_CLASS}
      requirements:
        - key: node.kubernetes.io/instance-type
          operator: In
          values: ["m5.large", "m5.xlarge"]
        - key: topology.kubernetes.io/zone
          operator: In
          values: ["us-east-1b"]
  limits:
    nodes: 9
  disruption:
    consolidateAfter: 0s
    budgets:
      - nodes: 25%
`, ([p]) => expect(p!.replicas).toBe(6)],
  ['tainted GPU pool (nodepools page)', `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: accelerated
spec:
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 5m
  template:
    spec:${NODE_CLASS}
      requirements:
      - key: node.kubernetes.io/instance-type
        operator: In
        values: ["g5.xlarge", "g5.2xlarge"]
      taints:
      - key: example.org/accelerator
        value: "present"
        effect: NoSchedule
`, ([p]) => expect(p!.templateTaints).toEqual([{ key: 'example.org/accelerator', value: 'present', effect: 'NoSchedule' }])],
  ['startup taint for a CNI agent (nodepools page)', `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: cni-warmup
spec:
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
  template:
    spec:${NODE_CLASS}
      requirements: []
      startupTaints:
      - key: example.org/cni-not-ready
        value: "true"
        effect: NoExecute
`, ([p]) => expect(p!.templateTaints).toEqual([])],
  ['minValues on Exists and In for the same key (nodepools page)', EXAMPLE('flexible', [
    LINUX_AMD64,
    req('karpenter.k8s.aws/instance-category', 'In', ['c', 'm', 'r'], 2),
    req('karpenter.k8s.aws/instance-family', 'Exists', undefined, 5),
    req('karpenter.k8s.aws/instance-family', 'In', ['m5', 'm5d', 'c5', 'c5d', 'c4', 'r4'], 3),
    req('node.kubernetes.io/instance-type', 'Exists', undefined, 10),
    req('karpenter.k8s.aws/instance-generation', 'Gte', ['3']),
  ].join('\n')), ([p]) => expect(p!.requirements.filter((r) => r.minValues !== undefined)).toHaveLength(4)],
  ['general purpose (examples/v1)', EXAMPLE('general', [req('karpenter.k8s.aws/instance-category', 'In', ['c', 'm', 'r']), req('karpenter.k8s.aws/instance-generation', 'Gt', ['2'])].join('\n')), ([p]) => expect(p!.name).toBe('general')],
  ['spot (examples/v1)', EXAMPLE('spot', [req('karpenter.sh/capacity-type', 'In', ['spot']), CATEGORY_GENERATION].join('\n')), ([p]) => expect(p!.requirements[0]!.values).toEqual(['spot'])],
  ['minValues on family (examples/v1)', EXAMPLE('spot-flex', [req('karpenter.sh/capacity-type', 'In', ['spot']), req('karpenter.k8s.aws/instance-family', 'Exists', undefined, 5), CATEGORY_GENERATION].join('\n')), ([p]) => expect(p!.requirements[1]!.minValues).toBe(5)],
  ['minValues on several keys (examples/v1)', EXAMPLE('spot-keys', [req('karpenter.sh/capacity-type', 'In', ['spot']), req('karpenter.k8s.aws/instance-category', 'In', ['c', 'm', 'r'], 2), req('karpenter.k8s.aws/instance-family', 'Exists', undefined, 5), req('node.kubernetes.io/instance-type', 'Exists', undefined, 10)].join('\n')), ([p]) => expect(p!.requirements.map((r) => r.minValues)).toEqual([undefined, 2, 5, 10])],
  ['two architectures in one file (examples/v1)', `${EXAMPLE('x86', [req('kubernetes.io/arch', 'In', ['amd64']), CATEGORY_GENERATION].join('\n'))}---\n${EXAMPLE('graviton', [req('kubernetes.io/arch', 'In', ['arm64']), CATEGORY_GENERATION].join('\n'))}`, (pools) => expect(pools.map((p) => p.name)).toEqual(['x86', 'graviton'])],
  ['Windows (examples/v1)', EXAMPLE('windows', [req('kubernetes.io/os', 'In', ['windows']), req('karpenter.k8s.aws/instance-category', 'In', ['c', 'm', 'r'])].join('\n')), ([p]) => expect(p!.requirements[0]!.values).toEqual(['windows'])],
  ['large instances only (examples/v1)', EXAMPLE('large', [req('karpenter.k8s.aws/instance-cpu', 'Gt', ['15']), req('karpenter.k8s.aws/instance-cpu', 'Lt', ['65'])].join('\n')), ([p]) => expect(p!.requirements.map((r) => r.operator)).toEqual(['Gt', 'Lt', 'In'])],
  ['a cpu limit (examples/v1)', EXAMPLE('capped', CATEGORY_GENERATION, '  limits:\n    cpu: 100\n'), ([p]) => expect(p!.limits).toEqual({ cpu: 100_000 })],
  ['node lifetime and drain timeout (examples/v1)', EXAMPLE('lifetime', CATEGORY_GENERATION, '  disruption:\n    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 30s\n').replace('      requirements:', '      expireAfter: 48h\n      terminationGracePeriod: 12h\n      requirements:'), ([p]) => expect(p!.expireAfterMs).toBe(48 * 3_600_000)],
  ['Lte, the other new bound (scheduling page)', EXAMPLE('small', [req('karpenter.k8s.aws/instance-cpu', 'Lte', ['8'])].join('\n')), ([p]) => expect(p!.requirements[0]!.operator).toBe('Lte')],
];

const REFUSED: readonly [string, string, string][] = [
  // The reference example as printed sets replicas together with weight and cpu/memory limits, which
  // the CRD's rules for static pools refuse.
  ['reference NodePool with replicas (weight on a static pool)', REFERENCE('  replicas: 5\n'), 'spec.weight: is not supported on a static NodePool'],
  ['static pool with cpu, memory and GPU limits (nodepools page)', `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: fixed
spec:
  replicas: 10
  template:
    spec:
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot"]
  limits:
    cpu: 1000
    memory: 1000Gi
    nvidia.com/gpu: 2
    nodes: 20
`, 'spec.limits.cpu: only limits.nodes is supported on a static NodePool'],
  ['a fragment without metadata (scheduling page)', `apiVersion: karpenter.sh/v1
kind: NodePool
spec:
  template:
    spec:
      requirements:
        - key: example.org/team
          operator: Exists
`, 'metadata: is required'],
  ['the placeholders left in (policy "a | b")', REFERENCE().replace('consolidationPolicy: WhenEmptyOrUnderutilized', 'consolidationPolicy: WhenEmptyOrUnderutilized | WhenEmpty'), 'must be one of'],
  ['a v1beta1 pool of older docs', `apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: legacy
spec:
  template:
    spec:
      nodeClassRef:
        apiVersion: karpenter.k8s.aws/v1beta1
        kind: EC2NodeClass
        name: standard
  disruption:
    consolidationPolicy: WhenUnderutilized
    expireAfter: 720h
`, 'convert the NodePool to karpenter.sh/v1'],
  ['a v1beta1 nodeClassRef in a v1 pool', EXAMPLE('old-ref', CATEGORY_GENERATION).replace('group: karpenter.k8s.aws', 'apiVersion: karpenter.k8s.aws/v1beta1'), 'spec.template.spec.nodeClassRef.apiVersion: karpenter.sh/v1 names the group instead'],
  ['kubelet settings in the pool (moved to EC2NodeClass in v1)', EXAMPLE('kubelet', CATEGORY_GENERATION).replace('      requirements:', '      kubelet:\n        maxPods: 110\n      requirements:'), 'spec.template.spec.kubelet: moved to the EC2NodeClass'],
  ['minValues above the listed values', EXAMPLE('too-few', req('karpenter.k8s.aws/instance-category', 'In', ['c', 'm'], 3)), 'minValues: 3 is more than the 2 value(s) listed'],
  ['minValues above 50', EXAMPLE('too-many', req('node.kubernetes.io/instance-type', 'Exists', undefined, 51)), 'minValues: 51 must be an integer from 1 to 50'],
  ['Gte with a negative bound', EXAMPLE('negative', req('karpenter.k8s.aws/instance-generation', 'Gte', ['-1'])), 'needs exactly one non-negative integer value'],
  ['a karpenter.sh label in the template', EXAMPLE('restricted', CATEGORY_GENERATION).replace('  template:\n', '  template:\n    metadata:\n      labels:\n        karpenter.sh/custom: "x"\n'), 'the karpenter.sh label domain is restricted'],
];

const parse = (text: string) => parseNodePools(decodeDocuments(text));

describe('Karpenter v1.14 documentation NodePools', () => {
  it.each(ACCEPTED)('accepts: %s', (_name, text, check) => {
    check(parse(text));
  });

  it.each(REFUSED)('refuses: %s', (_name, text, message) => {
    let error: unknown;
    try {
      parse(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).message).toContain(message);
  });
});
