// Where consolidation may put the pods it moves, through the real `bin` and kubectl-shaped input, each
// case built from the setup of the Karpenter v1.14 test it follows:
// - "should not consolidate pods onto a destination node that is under its consolidateAfter window";
// - "Parallelization: should not consolidate a node that is launched for pods on a deleting node";
// - "should not ignore hostname affinity when using non-local path volumes" (and its local/hostPath twin).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { kubeNode, kubePod } from '../support/fakeKubeApi.ts';

const BIN = join(import.meta.dirname, '../../bin/eks-consolidator.mjs');
const NOW = '2026-11-21T12:00:00Z';
let dir: string;
let catalogFile: string;

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
type Json = Record<string, unknown>;
let planCount = 0;
function plan(items: readonly Json[], consolidateAfter: string, now = NOW, extra: string[] = [], env: Record<string, string> = {}) {
  planCount += 1;
  const clusterFile = file(`cluster-${planCount}.json`, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  const poolsFile = file(`pools-${planCount}.yaml`, pool(consolidateAfter));
  const r = run(['plan', '--cluster', clusterFile, '--catalog', catalogFile, '--config', poolsFile, '--now', now, ...extra], env);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as {
    decisions: { nodes: string[]; action: string }[];
    nodes: { name: string; reasons: string[] }[];
    notes: string[];
  };
}
const reasons = (out: ReturnType<typeof plan>, name: string) => (out.nodes.find((n) => n.name === name)?.reasons ?? []).join(' | ');
const decided = (out: ReturnType<typeof plan>) => out.decisions.map((d) => d.nodes);

const pool = (consolidateAfter: string) => `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: ${consolidateAfter}
`;

const catalog = {
  region: 'us-east-1',
  instanceTypes: ['large', 'xlarge', '2xlarge'].map((size, i) => ({
    name: `m5.${size}`,
    capacity: { cpu: String(2 * 2 ** i), memory: `${8 * 2 ** i}Gi`, pods: '58' },
    allocatable: { cpu: `${1930 * 2 ** i}m`, memory: `${7 * 2 ** i}Gi`, pods: '58' },
    offerings: [{ zone: 'us-east-1a', capacityType: 'on-demand', price: 0.096 * 2 ** i }],
  })),
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ekc-destinations-'));
  catalogFile = file('catalog.json', JSON.stringify(catalog));
});

const withMeta = (object: Json, extra: Json): Json => ({ ...object, metadata: { ...(object['metadata'] as Json), ...extra } });
const withSpec = (object: Json, extra: Json): Json => ({ ...object, spec: { ...(object['spec'] as Json), ...extra } });

describe('a destination inside its consolidateAfter window takes no moved pods', () => {
  // Both nodes are the cheapest type, so the only move is deleting `src` onto `dest`; `dest`'s pods
  // started 30 seconds before the pass and the pool waits consolidateAfter 1m.
  const items = [
    kubeNode('dest'),
    kubeNode('src'),
    kubePod('default', 'web-1', { node: 'dest', createdAt: '2026-11-21T11:59:30Z' }),
    kubePod('default', 'web-2', { node: 'dest', createdAt: '2026-11-21T11:59:30Z' }),
    kubePod('default', 'web-3', { node: 'src', createdAt: '2026-11-21T08:00:00Z' }),
  ];

  it.each([
    ['30s after the last pod event on dest: nothing is moved', NOW, []],
    ['2 minutes later, past the window: src is deleted onto dest', '2026-11-21T12:02:00Z', [['src']]],
  ])('%s', (_name, now, expected) => {
    const out = plan(items, '1m', now);
    expect(decided(out)).toEqual(expected);
    if (expected.length === 0) expect(reasons(out, 'src')).toMatch(/node dest has room but is inside its NodePool's consolidateAfter window/);
  });

  it('a pool without a wait (consolidateAfter: 0s) has no window', () => {
    expect(decided(plan(items, '0s'))).toEqual([['src']]);
  });
});

describe('the pods of a node being deleted need room first', () => {
  // Karpenter launched `new` (an m5.2xlarge) for the five 1-cpu pods of `old`, which is being deleted;
  // two of them already run on `new`. Seen alone, `new` would be replaced by an m5.xlarge.
  const cpuPod = (name: string, node: string) => kubePod('default', name, { node, cpu: '1', createdAt: '2026-11-21T10:00:00Z' });
  const old = kubeNode('old', { instanceType: 'm5.2xlarge', cpu: '7910m', memory: '28Gi' });
  const items = (marked: Json) => [marked, kubeNode('new', { instanceType: 'm5.2xlarge', cpu: '7910m', memory: '28Gi' }), ...[1, 2, 3].map((i) => cpuPod(`app-${i}`, 'old')), ...[4, 5].map((i) => cpuPod(`app-${i}`, 'new'))];

  it('control: with nothing being deleted, new is replaced by a smaller node', () => {
    const out = plan([kubeNode('new', { instanceType: 'm5.2xlarge', cpu: '7910m', memory: '28Gi' }), ...[4, 5].map((i) => cpuPod(`app-${i}`, 'new'))], '0s');
    expect(out.decisions).toEqual([expect.objectContaining({ nodes: ['new'], action: 'replace' })]);
  });

  it.each([
    ['a deletion timestamp', withMeta(old, { deletionTimestamp: '2026-11-21T11:58:00Z', finalizers: ['karpenter.sh/termination'] })],
    ["Karpenter's karpenter.sh/disrupted taint", withSpec(old, { taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] })],
  ])('old marked by %s: new is left alone for its pods', (_name, marked) => {
    const out = plan(items(marked), '0s');
    expect(out.decisions).toEqual([]);
    expect(reasons(out, 'new')).toMatch(/receives pods of node old, which is being deleted, so it is left alone until they settle/);
  });

  it('pods of a node being deleted that fit nowhere hold every decision, and the plan says why', () => {
    const full = [kubeNode('old', { cpu: '1930m' }), kubeNode('spare'), kubePod('default', 'big', { node: 'old', cpu: '1500m' }), kubePod('default', 'small', { node: 'spare', cpu: '1000m' })];
    const out = plan([withMeta(full[0]!, { deletionTimestamp: '2026-11-21T11:58:00Z' }), ...full.slice(1)], '0s');
    expect(out.decisions).toEqual([]);
    expect(out.notes.join(' ')).toMatch(/1 pod\(s\) of nodes being deleted have no place yet \(default\/big\)/);
  });
});

describe('volume topology as Karpenter reads it', () => {
  // An oversized node whose one pod uses a volume whose PersistentVolume names the node's host: only a
  // local or hostPath volume lets the pod (and so the node) move; a CSI volume keeps it where it is.
  const volume = (source: Json): Json[] => [
    {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv-data', creationTimestamp: '2026-11-20T00:00:00Z' },
      spec: {
        accessModes: ['ReadWriteOnce'],
        capacity: { storage: '10Gi' },
        claimRef: { kind: 'PersistentVolumeClaim', namespace: 'default', name: 'data' },
        ...source,
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['big'] }] }] } },
        storageClassName: 'pinned',
      },
      status: { phase: 'Bound' },
    },
    {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: 'default', creationTimestamp: '2026-11-20T00:00:00Z' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } }, storageClassName: 'pinned', volumeName: 'pv-data' },
      status: { phase: 'Bound' },
    },
  ];
  const items = (source: Json) => [
    kubeNode('big', { instanceType: 'm5.2xlarge', cpu: '7910m', memory: '28Gi' }),
    kubePod('default', 'db-0', { node: 'big', cpu: '500m', claim: 'data', owner: { kind: 'StatefulSet', name: 'db' } }),
    ...volume(source),
  ];

  it.each([
    ['a local volume bound to the host: the node is replaced', { local: { path: '/mnt/disks/ssd1' } }, true],
    ['a hostPath volume bound to the host: the node is replaced', { hostPath: { path: '/data' } }, true],
    ['a CSI volume bound to the host: the pod and its node stay', { csi: { driver: 'local.csi.openebs.io', volumeHandle: 'pvc-1' } }, false],
  ])('%s', (_name, source, replaced) => {
    const out = plan(items(source), '0s');
    expect(out.decisions.map((d) => [d.nodes, d.action])).toEqual(replaced ? [[['big'], 'replace']] : []);
    if (!replaced) expect(reasons(out, 'big')).toMatch(/its persistent volume is bound to node big \(not a local or hostPath volume\), so it can run nowhere else/);
  });
});

describe('hostname topology spread as kube-scheduler counts it', () => {
  // One web pod per node with a hostname spread of maxSkew 1. Karpenter counts a host it could launch
  // (zero pods) and so never stacks two on one host; kube-scheduler, which places the moved pods, counts
  // only the nodes there are, and does.
  const spread = { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } } }] };
  const web = (name: string, node: string) => withSpec(kubePod('default', name, { node, labels: { app: 'web' }, createdAt: '2026-11-21T08:00:00Z' }), spread);

  it('a node is deleted by stacking its pod on a host that already runs one', () => {
    const out = plan([kubeNode('a'), kubeNode('b'), kubeNode('c'), web('web-1', 'a'), web('web-2', 'b'), web('web-3', 'c')], '0s');
    expect(out.decisions.length).toBeGreaterThan(0);
    expect(out.decisions.every((d) => d.action === 'delete')).toBe(true);
  });
});

describe("preferences, as Karpenter's default preference policy (Respect) reads them", () => {
  // Three nodes of the cheapest type, one web replica each; every replica prefers a host without another.
  // Respect: a new node of the same price would keep the preference, so deleting a node (which stacks two
  // replicas) is not taken and nothing saves. Ignore: the replicas are stacked and nodes deleted.
  const away = {
    affinity: {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'kubernetes.io/hostname' } },
        ],
      },
    },
  };
  const web = (name: string, node: string) => withSpec(kubePod('default', name, { node, labels: { app: 'web' }, createdAt: '2026-11-21T08:00:00Z' }), away);
  const items = [kubeNode('a'), kubeNode('b'), kubeNode('c'), web('web-1', 'a'), web('web-2', 'b'), web('web-3', 'c')];

  it.each([
    ['by default (Respect): nothing is taken', [], {}, false],
    ['--preference-policy Ignore: nodes are deleted', ['--preference-policy', 'Ignore'], {}, true],
    ['PREFERENCE_POLICY=Ignore: nodes are deleted', [], { PREFERENCE_POLICY: 'Ignore' }, true],
    ['the flag wins over the variable', ['--preference-policy', 'Respect'], { PREFERENCE_POLICY: 'Ignore' }, false],
  ])('%s', (_name, flags, env, deletes) => {
    const out = plan(items, '0s', NOW, flags, env);
    expect(out.decisions.length > 0).toBe(deletes);
    expect(out.decisions.every((d) => d.action === 'delete')).toBe(true);
  });

  it('a policy it does not know is refused, naming the flag', () => {
    const r = run(['plan', '--preference-policy', 'Sometimes']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/--preference-policy.*"Sometimes" is not Respect or Ignore/);
  });
});
