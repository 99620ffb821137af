// The karpenter actuator end to end: the real executor and NodeClaim adapter against the fake Kubernetes
// API with Karpenter's stand-in (test/support/fakeKarpenter.ts) running its lifecycle and termination
// controllers on the test's clock, the real DynamoStateStore on dynalite. No EC2 call is made.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { executePlan, resumeCommands } from '../../src/app/act/executeCommands.ts';
import { kubeDaemonSet, kubeNode, kubePod } from '../support/fakeKubeApi.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import {
  FAST,
  KARPENTER_NODE_LABELS,
  SPARE,
  deleteDecision,
  events,
  evictions,
  karpenterPassResult,
  nodeSpec,
  replaceDecision,
  startWorld,
  type World,
  type WorldOptions,
} from './harness.ts';

const OLD = 'ip-10-1-1-7.ec2.internal';
const OLD2 = 'ip-10-2-1-8.ec2.internal';
const MINUTE = 60_000;

let db: LocalDynamo;
let world: World | undefined;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.stop();
});
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** An old Karpenter node with two workload pods (one selects the pool's `team: web` label) and a daemonset pod. */
function busyNode(name: string, prefix = 'web') {
  return [
    kubeNode(name, { labels: KARPENTER_NODE_LABELS }),
    selecting({ team: 'web' }, kubePod('default', `${prefix}-1`, { node: name, labels: { app: prefix } })),
    kubePod('default', `${prefix}-2`, { node: name, labels: { app: prefix } }),
    kubePod('kube-system', `aws-node-${prefix}`, { node: name, owner: { kind: 'DaemonSet', name: 'aws-node' } }),
  ];
}

function selecting(nodeSelector: Record<string, string>, pod: Record<string, unknown>): Record<string, unknown> {
  return { ...pod, spec: { ...(pod['spec'] as object), nodeSelector } };
}

async function start(objects: readonly unknown[], karpenter: WorldOptions['karpenter'] = {}, spare = true): Promise<World> {
  world = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), ...objects], { karpenter, spare });
  return world;
}

const claimsOf = (w: World) => w.karpenter!.claims();
const claimOf = (w: World, node: string) => claimsOf(w).find((c) => (c['status'] as { nodeName?: string } | undefined)?.nodeName === node);
const annotations = (claim: Record<string, unknown>) => ((claim['metadata'] as { annotations?: Record<string, string> }).annotations ?? {});

describe('a replace through Karpenter', () => {
  it('creates a NodeClaim built from the NodePool, waits for Initialized, drains, deletes the old NodeClaim; no EC2 call', async () => {
    const w = await start(busyNode(OLD), { launchDelayMs: MINUTE, registerDelayMs: 2 * MINUTE, initializeDelayMs: MINUTE }, false);
    const decision = replaceDecision([OLD], { podDestinations: { 'default/web-1': 'replacement-1', 'default/web-2': 'replacement-1' } });

    const first = await executePlan({ ...karpenterPassResult([decision]), cluster: await w.cluster() }, w.deps(2 * MINUTE), FAST);
    expect(first.commands[0]).toMatchObject({ step: 'launched', waitingFor: 'replacement', evicted: 0 });
    const created = claimsOf(w).filter((c) => annotations(c)['eks-consolidator.io/command'] === 'cmd-1');
    expect(created).toHaveLength(1);
    const claim = created[0]!;
    const meta = claim['metadata'] as { labels: Record<string, string>; ownerReferences?: { kind: string; name: string }[] };
    const spec = claim['spec'] as Record<string, any>;
    expect(meta.labels).toMatchObject({ 'karpenter.sh/nodepool': 'default', team: 'web', 'karpenter.k8s.aws/ec2nodeclass': 'default' });
    expect(annotations(claim)).toMatchObject({ 'karpenter.sh/nodepool-hash': '1234567890', 'karpenter.sh/nodepool-hash-version': 'v3', 'example.com/owner': 'platform' });
    expect(meta.ownerReferences?.[0]).toMatchObject({ kind: 'NodePool', name: 'default' });
    expect(spec['nodeClassRef']).toEqual({ group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' });
    expect(spec['startupTaints']).toEqual([{ key: 'example.com/agent-not-ready', effect: 'NoSchedule' }]);
    expect(spec['expireAfter']).toBe('720h');
    expect(spec['terminationGracePeriod']).toBe('48h');
    const requirement = (key: string) => (spec['requirements'] as { key: string; values: string[] }[]).find((r) => r.key === key)?.values;
    expect(requirement('node.kubernetes.io/instance-type')).toEqual(['m5.large', 'm5a.large']);
    expect(requirement('karpenter.sh/capacity-type')).toEqual(['on-demand']);
    expect(requirement('topology.kubernetes.io/zone')).toEqual(['us-east-1a']);
    expect(spec['resources']?.requests).toMatchObject({ cpu: '200m', pods: '2' });
    expect(nodeSpec(w.api, OLD)).toMatchObject({ unschedulable: true, taints: expect.arrayContaining([{ key: 'eks-consolidator.io/disrupting', effect: 'NoSchedule' }]) });
    expect(evictions(w.api)).toEqual([]);

    // Registered but not yet initialized (its start-up taint is still on): nothing is evicted.
    w.clock.nowMs += 2 * MINUTE;
    const second = await resumeCommands(w.deps(30_000 + 10_000), FAST);
    expect(w.api.store.list('Node').map((n) => (n['metadata'] as { name: string }).name)).toHaveLength(2);
    expect(second.commands[0]).toMatchObject({ step: 'launched', evicted: 0 });
    expect(evictions(w.api)).toEqual([]);

    w.clock.nowMs += 2 * MINUTE;
    const third = await resumeCommands(w.deps(4 * MINUTE), FAST);
    expect(third.commands[0]).toMatchObject({ step: 'done', evicted: 2, errors: [] });
    const replacementNode = third.commands[0]!.replacementNodeName!;
    expect(evictions(w.api).map((e) => e.pod).sort()).toEqual(['default/web-1', 'default/web-2']);
    // The old node left through Karpenter's termination: NodeClaim and Node gone, its instance terminated.
    w.karpenter!.reconcile();
    expect(claimOf(w, OLD)).toBeUndefined();
    expect(w.api.store.get('Node', OLD)).toBeUndefined();
    expect(w.karpenter!.terminatedInstances).toHaveLength(1);
    expect(w.api.store.get('Node', replacementNode)).toBeDefined();
    expect(w.ec2.fleetRequests).toEqual([]);
    expect(w.ec2.terminateCalls).toEqual([]);
    expect(events(w.api, 'DisruptionTerminating').map((e) => e.message)).toEqual([expect.stringContaining('Deleting the NodeClaim')]);
    expect(w.karpenter!.leakedClaims()).toEqual([]);
  });

  it('rolls back when Karpenter cannot launch the NodeClaim (insufficient capacity)', async () => {
    const w = await start(busyNode(OLD), { insufficientCapacity: (c) => annotations(c)['eks-consolidator.io/command'] !== undefined });
    const report = await executePlan(karpenterPassResult([replaceDecision([OLD])]), w.deps(4 * MINUTE), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'rolledBack', evicted: 0 });
    expect(report.commands[0]!.endedBecause).toMatch(/no longer exists|could not launch/);
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
    expect(nodeSpec(w.api, OLD)?.unschedulable).toBeUndefined();
    expect(claimOf(w, OLD)).toBeDefined();
    expect(claimsOf(w).filter((c) => annotations(c)['eks-consolidator.io/command'] !== undefined)).toEqual([]);
  });

  it('rolls back when the NodeClaim never registers and Karpenter deletes it', async () => {
    const w = await start(busyNode(OLD), { neverRegister: () => true, registrationTimeoutMs: 15 * MINUTE });
    const report = await executePlan(karpenterPassResult([replaceDecision([OLD])]), w.deps(4 * MINUTE), { ...FAST, replacementReadyTimeoutMs: 20 * MINUTE });
    expect(report.commands[0]).toMatchObject({ step: 'launched' });
    w.clock.nowMs += 16 * MINUTE;
    const later = await resumeCommands(w.deps(4 * MINUTE), FAST);
    expect(later.commands[0]).toMatchObject({ step: 'rolledBack', evicted: 0 });
    expect(later.commands[0]!.endedBecause).toMatch(/no longer exists/);
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
    expect(w.karpenter!.leakedClaims()).toEqual([]);
  });

  it.each([
    ['registers without the label a pod selects', { labels: { team: null } }, /default\/web-1/],
    ['registers with less allocatable than the pods need', { allocatable: { cpu: '150m' } }, /has no place|would have no place/],
    ['registers with a taint the pods do not tolerate', { taints: [{ key: 'example.com/gpu', effect: 'NoSchedule' }] }, /would have no place/],
  ])('does not evict to a replacement that %s: rolled back before the first eviction', async (_name, overrides, why) => {
    // No spare node: the replacement is the only place the pods can go.
    const w = await start(busyNode(OLD), { nodeOverrides: (c) => (annotations(c)['eks-consolidator.io/command'] === undefined ? undefined : overrides) }, false);
    const report = await executePlan(karpenterPassResult([replaceDecision([OLD])]), w.deps(4 * MINUTE), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'rolledBack', evicted: 0 });
    expect(report.commands[0]!.endedBecause).toMatch(why);
    expect(evictions(w.api)).toEqual([]);
    // The replacement's NodeClaim was deleted (Karpenter terminates it); the old node is given back.
    w.karpenter!.reconcile();
    expect(claimsOf(w).filter((c) => annotations(c)['eks-consolidator.io/command'] !== undefined)).toEqual([]);
    expect(nodeSpec(w.api, OLD)?.taints ?? []).toEqual([]);
    expect(events(w.api, 'DisruptionBlocked').map((e) => e.message)).toEqual([expect.stringMatching(/would have no place on the cluster as it is now/)]);
  });

  it('keeps its own taint while Karpenter strips karpenter.sh/disrupted from nodes outside its queue', async () => {
    const w = await start(busyNode(OLD));
    w.api.setEvictionPolicy('blockByPdb');
    const report = await executePlan(karpenterPassResult([replaceDecision([OLD])]), w.deps(2 * MINUTE), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'evicting' });
    w.karpenter!.reconcile();
    expect(nodeSpec(w.api, OLD)).toMatchObject({ unschedulable: true, taints: expect.arrayContaining([{ key: 'eks-consolidator.io/disrupting', effect: 'NoSchedule' }]) });
  });
});

describe('an m-to-n repack through Karpenter', () => {
  it('creates every NodeClaim, waits for all, then drains both old nodes', async () => {
    const w = await start([...busyNode(OLD), ...busyNode(OLD2, 'api')], { registerDelayMs: 2 * MINUTE }, false);
    const one = replaceDecision([OLD]).replacements[0]!;
    const repack = replaceDecision([OLD, OLD2], { replacements: [one, one], move: 'm-to-n' });
    w.karpenter!.setDelays((c) => annotations(c)['eks-consolidator.io/replacement-index'] === '1', { registerDelayMs: 6 * MINUTE });
    const first = await executePlan(karpenterPassResult([repack]), w.deps(30_000 + 4 * MINUTE), FAST);
    expect(first.commands[0]).toMatchObject({ step: 'launched', evicted: 0 });
    expect(claimsOf(w).filter((c) => annotations(c)['eks-consolidator.io/command'] === 'cmd-1')).toHaveLength(2);
    expect(evictions(w.api)).toEqual([]);
    w.clock.nowMs += 3 * MINUTE;
    const second = await resumeCommands(w.deps(4 * MINUTE), FAST);
    expect(second.commands[0]).toMatchObject({ step: 'done', evicted: 4 });
    expect(second.commands[0]!.replacements).toHaveLength(2);
  });

  it('rolls back both NodeClaims when one of them cannot launch', async () => {
    const w = await start([...busyNode(OLD), ...busyNode(OLD2, 'api')], { insufficientCapacity: (c) => annotations(c)['eks-consolidator.io/replacement-index'] === '1' });
    const one = replaceDecision([OLD]).replacements[0]!;
    const repack = replaceDecision([OLD, OLD2], { replacements: [one, one], move: 'm-to-n' });
    const report = await executePlan(karpenterPassResult([repack]), w.deps(4 * MINUTE), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'rolledBack', evicted: 0 });
    w.karpenter!.reconcile();
    expect(claimsOf(w).filter((c) => annotations(c)['eks-consolidator.io/command'] !== undefined)).toEqual([]);
    expect(w.karpenter!.terminatedInstances).toHaveLength(1);
    expect(w.api.store.get('Node', OLD)).toBeDefined();
    expect(w.api.store.get('Node', OLD2)).toBeDefined();
  });
});

describe('a delete through Karpenter', () => {
  it('drains onto the other nodes, then deletes the NodeClaim', async () => {
    const w = await start(busyNode(OLD));
    const report = await executePlan(karpenterPassResult([deleteDecision([OLD], 'single-node')]), w.deps(2 * MINUTE), FAST);
    expect(report.commands[0]).toMatchObject({ step: 'done', evicted: 2 });
    w.karpenter!.reconcile();
    expect(w.api.store.get('Node', OLD)).toBeUndefined();
    expect(w.api.store.get('Node', SPARE)).toBeDefined();
    expect(w.ec2.terminateCalls).toEqual([]);
  });

  it('is not started for a node that has no NodeClaim', async () => {
    const w = await start(busyNode(OLD));
    const claim = claimOf(w, OLD)!;
    w.api.store.delete('NodeClaim', String((claim['metadata'] as { name: string }).name));
    const report = await executePlan(karpenterPassResult([deleteDecision([OLD], 'single-node')]), w.deps(2 * MINUTE), FAST);
    expect(report.commands).toEqual([]);
    expect(report.skipped[0]?.why).toMatch(/has no NodeClaim/);
    expect(w.api.mutatingRequests()).toEqual([]);
  });
});
