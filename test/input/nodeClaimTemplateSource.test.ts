// What the NodePool parser keeps for the `karpenter` actuator: the parts of a NodePool a NodeClaim
// copies (Karpenter's `NodeClaimTemplate.ToNodeClaim`, apis/v1/nodepool.go), as written, plus the
// NodePool's own hash annotations (Karpenter's drift check compares them with the claim's).
import { describe, expect, it } from 'vitest';
import { decodeDocuments } from '../../src/adapters/files/documents.ts';
import { parseNodePools } from '../../src/core/input/nodePools.ts';
import { expectInputError } from './helpers.ts';

/** A NodePool as `kubectl get nodepool general -o yaml` prints it once Karpenter has hashed it. */
const FULL = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: general
  uid: 3f1d2c7e-8a4b-4c1e-9f0a-5b6c7d8e9f01
  resourceVersion: "123456"
  generation: 4
  annotations:
    karpenter.sh/nodepool-hash: "6821555240594823858"
    karpenter.sh/nodepool-hash-version: v3
    kubectl.kubernetes.io/last-applied-configuration: "{}"
spec:
  template:
    metadata:
      labels:
        team: web
      annotations:
        example.org/contact: platform-team
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: standard
      taints:
        - key: example.org/dedicated
          value: web
          effect: NoSchedule
      startupTaints:
        - key: ebs.csi.aws.com/agent-not-ready
          effect: NoExecute
        - key: example.org/warming-up
          value: "true"
          effect: NoSchedule
      expireAfter: 720h
      terminationGracePeriod: 48h
      requirements:
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: ["c", "m", "r"]
        - key: node.kubernetes.io/instance-type
          operator: Exists
          minValues: 5
        - key: karpenter.k8s.aws/instance-generation
          operator: Gt
          values: ["4"]
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot", "on-demand"]
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
  limits:
    cpu: "1000"
status:
  nodes: 12
`;

const parse = (yaml: string) => parseNodePools(decodeDocuments(yaml));
const only = (yaml: string) => parse(yaml)[0]!;

describe('the NodeClaim template source of a NodePool', () => {
  it('captures everything a NodeClaim copies, as written', () => {
    expect(only(FULL).nodeClaimTemplate).toEqual({
      nodePoolUid: '3f1d2c7e-8a4b-4c1e-9f0a-5b6c7d8e9f01',
      annotations: { 'example.org/contact': 'platform-team' },
      hashAnnotations: { 'karpenter.sh/nodepool-hash': '6821555240594823858', 'karpenter.sh/nodepool-hash-version': 'v3' },
      startupTaints: [
        { key: 'ebs.csi.aws.com/agent-not-ready', effect: 'NoExecute' },
        { key: 'example.org/warming-up', value: 'true', effect: 'NoSchedule' },
      ],
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'standard' },
      expireAfter: '720h',
      terminationGracePeriod: '48h',
      requirements: [
        { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
        { key: 'node.kubernetes.io/instance-type', operator: 'Exists', minValues: 5 },
        { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] },
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
      ],
    });
  });

  it('leaves the rest of the pool as it was (labels and taints stay where they were)', () => {
    const pool = only(FULL);
    expect(pool.templateLabels).toEqual({ team: 'web' });
    expect(pool.templateTaints).toEqual([{ key: 'example.org/dedicated', value: 'web', effect: 'NoSchedule' }]);
    expect(pool.expireAfterMs).toBe(720 * 3_600_000);
  });

  it.each<[string, (yaml: string) => string, (source: ReturnType<typeof only>['nodeClaimTemplate']) => void]>([
    ['no template without a nodeClassRef', (y) => y.replace(/ {6}nodeClassRef:\n(?: {8}.*\n){3}/, ''), (s) => expect(s).toBeUndefined()],
    ['no uid when read from a file without one', (y) => y.replace(/ {2}uid: .*\n/, ''), (s) => expect(s).not.toHaveProperty('nodePoolUid')],
    ['no hash annotations before Karpenter hashed the pool', (y) => y.replace(/ {4}karpenter\.sh\/nodepool-hash.*\n/g, ''), (s) => expect(s!.hashAnnotations).toEqual({})],
    ['only the hash annotation present is copied', (y) => y.replace(/ {4}karpenter\.sh\/nodepool-hash-version.*\n/, ''), (s) => expect(s!.hashAnnotations).toEqual({ 'karpenter.sh/nodepool-hash': '6821555240594823858' })],
    ['no expireAfter when unset (Karpenter defaults it)', (y) => y.replace(/ {6}expireAfter: .*\n/, ''), (s) => expect(s).not.toHaveProperty('expireAfter')],
    ['expireAfter Never kept as written', (y) => y.replace('expireAfter: 720h', 'expireAfter: Never'), (s) => expect(s!.expireAfter).toBe('Never')],
    ['no terminationGracePeriod when unset', (y) => y.replace(/ {6}terminationGracePeriod: .*\n/, ''), (s) => expect(s).not.toHaveProperty('terminationGracePeriod')],
    ['no startup taints when none', (y) => y.replace(/ {6}startupTaints:\n(?: {8}.*\n)+/, ''), (s) => expect(s!.startupTaints).toEqual([])],
    ['no template annotations when none', (y) => y.replace(/ {6}annotations:\n {8}example.*\n/, ''), (s) => expect(s!.annotations).toEqual({})],
    [
      'requirements as written: no default capacity type added',
      (y) => y.replace(/ {8}- key: karpenter\.sh\/capacity-type\n(?: {10}.*\n){2}/, ''),
      (s) => expect(s!.requirements.map((r) => r.key)).not.toContain('karpenter.sh/capacity-type'),
    ],
  ])('%s', (_name, change, check) => {
    check(only(change(FULL)).nodeClaimTemplate);
  });

  it('keeps the pool default capacity type requirement out of the template but in the pool', () => {
    const pool = only(FULL.replace(/ {8}- key: karpenter\.sh\/capacity-type\n(?: {10}.*\n){2}/, ''));
    expect(pool.requirements.map((r) => r.key)).toContain('karpenter.sh/capacity-type');
  });

  it('is read from the API server too, where unknown fields are allowed', () => {
    const [doc] = decodeDocuments(FULL) as [Record<string, unknown>];
    const [pool] = parseNodePools([{ ...doc, spec: { ...(doc['spec'] as object), fromANewerKarpenter: true } }], { fromApiServer: true });
    expect(pool!.nodeClaimTemplate?.nodeClassRef.name).toBe('standard');
  });
});

describe('refused, naming the field', () => {
  const NP = 'NodePool "general"';
  it.each([
    ['a nodeClassRef that is not an object', (y: string) => y.replace(/nodeClassRef:\n(?: {8}.*\n){3}/, 'nodeClassRef: standard\n'), 'spec.template.spec.nodeClassRef', 'must be an object'],
    ['a nodeClassRef without a group', (y: string) => y.replace(/ {8}group: .*\n/, ''), 'spec.template.spec.nodeClassRef.group', 'is required'],
    ['a nodeClassRef without a kind', (y: string) => y.replace(/ {8}kind: EC2NodeClass\n/, ''), 'spec.template.spec.nodeClassRef.kind', 'is required'],
    ['a nodeClassRef with an empty name', (y: string) => y.replace('name: standard', 'name: ""'), 'spec.template.spec.nodeClassRef.name', 'is required'],
    ['a nodeClassRef name that is a number', (y: string) => y.replace('name: standard', 'name: 7'), 'spec.template.spec.nodeClassRef.name', 'must be a string, got 7'],
    ['a group with a version', (y: string) => y.replace('group: karpenter.k8s.aws', 'group: karpenter.k8s.aws/v1'), 'spec.template.spec.nodeClassRef.group', 'without a version'],
    ['a startup taint without an effect', (y: string) => y.replace(/ {10}effect: NoExecute\n/, ''), 'spec.template.spec.startupTaints[0].effect', 'must be one of'],
    ['a startup taint with a bad effect', (y: string) => y.replace('effect: NoExecute', 'effect: Sometimes'), 'spec.template.spec.startupTaints[0].effect', '"Sometimes" must be one of'],
    ['a terminationGracePeriod of Never', (y: string) => y.replace('terminationGracePeriod: 48h', 'terminationGracePeriod: Never'), 'spec.template.spec.terminationGracePeriod', 'Never is not allowed'],
    ['a terminationGracePeriod in days', (y: string) => y.replace('terminationGracePeriod: 48h', 'terminationGracePeriod: 2d'), 'spec.template.spec.terminationGracePeriod', 'such as 24h'],
    ['a terminationGracePeriod that is a number', (y: string) => y.replace('terminationGracePeriod: 48h', 'terminationGracePeriod: 48'), 'spec.template.spec.terminationGracePeriod', 'must be a string'],
    ['template annotations that are not strings', (y: string) => y.replace('example.org/contact: platform-team', 'example.org/contact: 3'), 'spec.template.metadata.annotations.example.org/contact', 'must be a string'],
  ])('%s', (_name, change, field, problem) => {
    expectInputError(() => parse(change(FULL)), NP, field, problem);
  });
});
