// The interruption function end to end: the real handler (middy, Powertools, the wiring) on the
// recorded EventBridge events in test/fixtures/events/, EKS and EC2 mocked at the SDK, the Kubernetes
// side against the fake API server holding the demo cluster plus one node of an instance this product
// launched (a spot replacement) with the kinds of pods a drain must tell apart.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DescribeClusterCommand } from '@aws-sdk/client-eks';
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/app/config.ts';
import { RECLAIM_MARGIN_MS } from '../../src/app/interruption/respond.ts';
import { parseInterruptionEvent, SPOT_NOTICE_MS } from '../../src/core/interruption/notice.ts';
import { InterruptedTaint } from '../../src/core/model/types.ts';
import { COMMAND_ANNOTATION } from '../../src/core/ports/actuator.ts';
import { createInterruptionHandler, type InterruptionResponse } from '../../src/handlers/interruption.ts';
import { events, evictions, nodeSpec } from '../act/harness.ts';
import { kubeNode, kubePod, startFakeKubeApi, type EvictionDecision, type FakeKubeApi } from '../support/fakeKubeApi.ts';
import { permissionsUsed, unauthorizedRequests } from '../support/rbac.ts';
import { captureStdout } from '../support/stdout.ts';
import { CLUSTER, credentials, demoObjects, ec2Mock, eksMock, jsonLines, lambdaContext } from './harness.ts';

const fixture = (name: string) => JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'events', `${name}.json`), 'utf8')) as Record<string, unknown>;
const SPOT = fixture('spot-interruption-warning');
const REBALANCE = fixture('rebalance-recommendation');
const STATE_CHANGE = fixture('state-change-terminated');
const HEALTH = fixture('health-scheduled-change');

/** The instance every fixture names: one of our spot replacements. */
const INSTANCE = (SPOT['detail'] as Record<string, string>)['instance-id']!;
const NODE = 'ip-10-0-72-41.ec2.internal';
const SPOT_TIME = Date.parse(SPOT['time'] as string);
/** When evictions stop for the spot warning: its time plus two minutes, less the margin. */
const EVICT_UNTIL = SPOT_TIME + SPOT_NOTICE_MS - RECLAIM_MARGIN_MS;

/** The tags our launcher puts on a replacement (ec2Launcher.ts), and Karpenter's on its own nodes. */
const OUR_TAGS = {
  'eks-consolidator/managed': 'true',
  [`kubernetes.io/cluster/${CLUSTER}`]: 'owned',
  'eks-consolidator/command': 'cmd-2b1f8e0c4d7a',
  'karpenter.sh/nodepool': 'default',
  Name: `${CLUSTER}/default`,
};
const KARPENTER_TAGS = {
  [`kubernetes.io/cluster/${CLUSTER}`]: 'owned',
  'karpenter.sh/nodepool': 'default',
  'karpenter.k8s.aws/ec2nodeclass': 'default',
  'karpenter.sh/nodeclaim': 'default-7xk2p',
};

/** Pods the spot warning's drain evicts; the others on the node stay. */
const EVICTED = ['default/web-7d9c5b8f4-9fj3m', 'default/web-7d9c5b8f4-x2kqp', 'payments/ledger-0'];
const LEFT = ['batch/report-29361840-7xkqz', 'default/debug-shell', 'kube-system/aws-node-8kq2d'];

function ourNodeObjects(): unknown[] {
  const node = kubeNode(NODE, { zone: 'us-east-1b', capacityType: 'spot', instanceType: 'm5.large', createdAt: '2026-11-21T10:15:00Z' });
  (node['spec'] as Record<string, unknown>)['providerID'] = `aws:///us-east-1b/${INSTANCE}`;
  const on = { node: NODE, createdAt: '2026-11-21T10:17:00Z' };
  return [
    node,
    kubePod('default', 'web-7d9c5b8f4-x2kqp', { ...on, labels: { app: 'web' }, owner: { kind: 'ReplicaSet', name: 'web-7d9c5b8f4' } }),
    kubePod('default', 'web-7d9c5b8f4-9fj3m', { ...on, labels: { app: 'web' }, owner: { kind: 'ReplicaSet', name: 'web-7d9c5b8f4' } }),
    kubePod('payments', 'ledger-0', { ...on, labels: { app: 'ledger' }, owner: { kind: 'StatefulSet', name: 'ledger' } }),
    // Nothing would recreate it: never evicted.
    kubePod('default', 'debug-shell', { ...on, owner: null }),
    // Recreated on every node by its DaemonSet, dies with the node: never evicted.
    kubePod('kube-system', 'aws-node-8kq2d', { ...on, labels: { 'k8s-app': 'aws-node' }, owner: { kind: 'DaemonSet', name: 'aws-node' } }),
    // karpenter.sh/do-not-disrupt: left as Karpenter's drain leaves it.
    kubePod('batch', 'report-29361840-7xkqz', { ...on, owner: { kind: 'Job', name: 'report-29361840' }, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }),
  ];
}

function describeAnswer(tags: Record<string, string>, state = 'running') {
  return {
    Reservations: [
      {
        Instances: [
          {
            InstanceId: INSTANCE,
            InstanceType: 'm5.large' as const,
            InstanceLifecycle: 'spot' as const,
            State: { Name: state as 'running' },
            Placement: { AvailabilityZone: 'us-east-1b' },
            Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })),
          },
        ],
      },
    ],
  };
}

let kube: FakeKubeApi;
let clock: { now: number };
let lines: string[];
let release: () => void;

beforeEach(async () => {
  clock = { now: SPOT_TIME + 4_000 };
  kube = await startFakeKubeApi({ objects: [...demoObjects(), ...ourNodeObjects()], authorize: (token) => token?.startsWith('k8s-aws-v1.') === true, now: () => clock.now });
  eksMock.reset();
  ec2Mock.reset();
  eksMock.on(DescribeClusterCommand).resolves({ cluster: { name: CLUSTER, status: 'ACTIVE', endpoint: kube.url, certificateAuthority: { data: kube.caData } } });
  ec2Mock.on(DescribeInstancesCommand, { InstanceIds: [INSTANCE] }).resolves(describeAnswer(OUR_TAGS));
  lines = [];
  release = captureStdout(lines);
});

afterEach(async () => {
  release();
  await kube.close();
});

function handler(extra: Env = {}) {
  return createInterruptionHandler({
    env: { CLUSTER_NAME: CLUSTER, AWS_REGION: 'us-east-1', TABLE_NAME: 'eks-consolidator-test-state', DRY_RUN: 'false', FUNCTION_TIMEOUT_SECONDS: '150', ...extra },
    clock: () => clock.now,
    // Each wait between eviction rounds moves the clock, as the real one would.
    sleep: async (ms) => {
      clock.now += ms;
    },
    overrides: { credentials },
  });
}

const invoke = (event: unknown, extra: Env = {}) => handler(extra)(event, lambdaContext(150_000)) as Promise<InterruptionResponse>;

const podsOnNode = () =>
  kube.store
    .list('Pod')
    .filter((p) => (p['spec'] as Record<string, unknown>)['nodeName'] === NODE)
    .map((p) => `${(p['metadata'] as Record<string, string>)['namespace']}/${(p['metadata'] as Record<string, string>)['name']}`)
    .sort();

const writes = () => kube.mutatingRequests().map((r) => `${r.method} ${r.path}`);

function metric(name: string, dimensions: Record<string, string> = {}): number | undefined {
  const docs = jsonLines(lines).filter((l) => name in l && Object.entries(dimensions).every(([k, v]) => l[k] === v));
  return docs.length === 0 ? undefined : docs.reduce((sum, d) => sum + (d[name] as number), 0);
}

describe('the recorded events', () => {
  it('parse into the notices the function acts on', () => {
    expect(parseInterruptionEvent(SPOT)).toEqual({
      notice: expect.objectContaining({ kind: 'spotInterruption', action: 'cordonAndDrain', instanceIds: [INSTANCE], instanceAction: 'terminate', reclaimAt: SPOT_TIME + 120_000 }),
    });
    expect(parseInterruptionEvent(REBALANCE)).toEqual({ notice: expect.objectContaining({ kind: 'rebalanceRecommendation', action: 'cordon', instanceIds: [INSTANCE] }) });
    expect(parseInterruptionEvent(STATE_CHANGE)).toEqual({ notice: expect.objectContaining({ kind: 'stateChange', action: 'none', state: 'terminated' }) });
    expect(parseInterruptionEvent(HEALTH)).toEqual({
      notice: expect.objectContaining({ kind: 'scheduledChange', action: 'cordonAndDrain', instanceIds: [INSTANCE], eventTypeCode: 'AWS_EC2_PERSISTENT_INSTANCE_RETIREMENT_SCHEDULED' }),
    });
    expect(parseInterruptionEvent(HEALTH)).not.toHaveProperty('notice.reclaimAt');
  });

  it.each([
    ['a scheduled event', { version: '0', id: 'x', 'detail-type': 'Scheduled Event', source: 'aws.events', time: '2026-11-21T14:00:00Z', detail: {} }],
    ['a Health event of another service', { ...HEALTH, detail: { ...(HEALTH['detail'] as object), service: 'RDS', eventTypeCode: 'AWS_RDS_MAINTENANCE_SCHEDULED' } }],
    ['a Health event that is not a scheduled change', { ...HEALTH, detail: { ...(HEALTH['detail'] as object), eventTypeCategory: 'issue' } }],
    ['a spot warning without an instance id', { ...SPOT, detail: { 'instance-action': 'terminate' } }],
    ['no event at all', null],
  ])('%s is unrecognised', (_name, event) => {
    expect(parseInterruptionEvent(event)).toHaveProperty('unrecognised');
  });
});

describe('a spot interruption warning for our instance', () => {
  it('taints and cordons the node, evicts its workload pods, leaves bare, DaemonSet and do-not-disrupt pods', async () => {
    const response = await invoke(SPOT);

    expect(nodeSpec(kube, NODE)).toMatchObject({ unschedulable: true, taints: [{ key: InterruptedTaint.key, effect: 'NoSchedule' }] });
    // No command annotation: the consolidation pass's orphaned-taint cleanup never looks at this node.
    expect((kube.store.get('Node', NODE)!['metadata'] as Record<string, unknown>)['annotations'] ?? {}).not.toHaveProperty(COMMAND_ANNOTATION);
    expect(evictions(kube).map((e) => e.pod).sort()).toEqual(EVICTED);
    expect(podsOnNode()).toEqual(LEFT);
    expect(response).toMatchObject({
      function: 'interruption',
      dryRun: false,
      notice: { kind: 'spotInterruption', instanceIds: [INSTANCE], reclaimAt: '2026-11-21T14:05:27.000Z' },
      instances: [{ instanceId: INSTANCE, outcome: 'acted', node: NODE, taint: 'tainted', drain: 'done', evicted: 3, blocked: [], kept: ['batch/report-29361840-7xkqz', 'default/debug-shell'] }],
    });
    // Writes: the one guarded node patch, the evictions, one event. Nothing else anywhere.
    expect(writes().filter((w) => !w.endsWith('/eviction'))).toEqual([`PATCH /api/v1/nodes/${NODE}`, 'POST /api/v1/namespaces/default/events']);
    const patch = kube.requests.find((r) => r.method === 'PATCH')!.body as { op: string; path: string; value?: unknown }[];
    expect(patch).toContainEqual({ op: 'test', path: '/metadata/uid', value: `uid-node-${NODE}` });
    const [event] = events(kube);
    expect(event).toMatchObject({ node: NODE, reason: 'SpotInterrupted', type: 'Warning' });
    expect(event!.message).toContain(`instance ${INSTANCE}, reclaimed at 2026-11-21T14:05:27Z`);
    expect(event!.message).toContain('evicted 3 pod(s)');
    expect(event!.message).toContain('default/debug-shell');

    expect(metric('eks_consolidator_interruption_messages_total', { kind: 'spot_interruption', outcome: 'acted', cluster: CLUSTER })).toBe(1);
    expect(metric('eks_consolidator_interruption_nodes_tainted_total', { kind: 'spot_interruption' })).toBe(1);
    expect(metric('eks_consolidator_interruption_pods_evicted_total', { kind: 'spot_interruption' })).toBe(3);
    expect(metric('eks_consolidator_interruption_pods_blocked_total')).toBeUndefined();
  });

  it('a second delivery of the same event writes nothing', async () => {
    const warm = handler();
    await warm(SPOT, lambdaContext(150_000));
    const before = kube.mutatingRequests().length;
    clock.now += 3_000;
    const again = (await warm(SPOT, lambdaContext(150_000))) as InterruptionResponse;

    expect(kube.mutatingRequests().length).toBe(before);
    expect(again).toMatchObject({ instances: [{ outcome: 'acted', taint: 'alreadyTainted', drain: 'done', evicted: 0, blocked: [] }] });
    expect(events(kube)).toHaveLength(1);
    expect(podsOnNode()).toEqual(LEFT);
  });

  it('retries a PodDisruptionBudget that refuses (429) until it allows, within the deadline', async () => {
    let refusals = 3;
    kube.setEvictionPolicy(({ name }): EvictionDecision => (name === 'ledger-0' && refusals-- > 0 ? 'blockByPdb' : 'allow'));
    const response = await invoke(SPOT);

    const ledger = evictions(kube).filter((e) => e.pod === 'payments/ledger-0');
    expect(ledger.map((e) => e.status)).toEqual([429, 429, 429, 201]);
    expect(podsOnNode()).toEqual(LEFT);
    expect(response).toMatchObject({ instances: [{ drain: 'done', evicted: 3, blocked: [] }] });
    // Three waits of 5 s between the rounds, well before the deadline.
    expect(clock.now).toBe(SPOT_TIME + 4_000 + 15_000);
    expect(clock.now).toBeLessThan(EVICT_UNTIL);
  });

  it('gives up on a PodDisruptionBudget that never allows at the deadline, before the reclaim', async () => {
    kube.setEvictionPolicy(({ name }): EvictionDecision => (name === 'ledger-0' ? 'blockByPdb' : 'allow'));
    const response = await invoke(SPOT);

    expect(response).toMatchObject({ instances: [{ drain: 'deadline', evicted: 2, blocked: ['payments/ledger-0'] }] });
    expect(clock.now).toBeLessThanOrEqual(EVICT_UNTIL);
    expect(clock.now).toBeGreaterThan(EVICT_UNTIL - 5_000);
    const attempts = evictions(kube).filter((e) => e.pod === 'payments/ledger-0');
    expect(attempts.length).toBeGreaterThan(15);
    expect(attempts.every((e) => e.status === 429)).toBe(true);
    expect(podsOnNode()).toEqual([...LEFT, 'payments/ledger-0'].sort());
    expect(events(kube, 'SpotInterrupted')[0]!.message).toContain('still refused at 2026-11-21T14:05:12Z: payments/ledger-0');
    expect(metric('eks_consolidator_interruption_pods_blocked_total', { kind: 'spot_interruption' })).toBe(1);
  });

  it('past its deadline: taints and cordons, evicts nothing', async () => {
    clock.now = EVICT_UNTIL + 2_000;
    const response = await invoke(SPOT);

    expect(evictions(kube)).toEqual([]);
    expect(podsOnNode()).toEqual([...LEFT, ...EVICTED].sort());
    expect(nodeSpec(kube, NODE)).toMatchObject({ unschedulable: true, taints: [{ key: InterruptedTaint.key }] });
    expect(response).toMatchObject({ instances: [{ outcome: 'acted', drain: 'late', evicted: 0 }] });
    expect(events(kube, 'SpotInterrupted')[0]!.message).toContain('too late to evict');
  });

  it('delivered again once the instance is already terminating: nothing at all in Kubernetes', async () => {
    ec2Mock.on(DescribeInstancesCommand, { InstanceIds: [INSTANCE] }).resolves(describeAnswer(OUR_TAGS, 'shutting-down'));
    clock.now = SPOT_TIME + SPOT_NOTICE_MS + 60_000;
    const response = await invoke(SPOT);

    expect(response).toMatchObject({ instances: [{ outcome: 'instanceGone', instanceState: 'shutting-down' }] });
    expect(kube.requests).toEqual([]);
  });

  it('a dry run (DRY_RUN=true) reports what it would do and writes nothing', async () => {
    const response = await invoke(SPOT, { DRY_RUN: 'true' });

    expect(writes()).toEqual([]);
    expect(response).toMatchObject({ dryRun: true, instances: [{ outcome: 'dryRun', node: NODE, wouldEvict: EVICTED }] });
    expect(metric('eks_consolidator_interruption_messages_total', { kind: 'spot_interruption', outcome: 'dry_run' })).toBe(1);
  });
});

describe('RBAC', () => {
  it('every request of a drain (with PDB refusals), a rebalance and a scheduled change is one infra/rbac.yaml allows', async () => {
    let refusals = 1;
    kube.setEvictionPolicy(({ name }): EvictionDecision => (name === 'ledger-0' && refusals-- > 0 ? 'blockByPdb' : 'allow'));
    clock.now = Date.parse(REBALANCE['time'] as string) + 2_000;
    await invoke(REBALANCE);
    clock.now = SPOT_TIME + 4_000;
    await invoke(SPOT);
    await invoke(HEALTH);

    expect(unauthorizedRequests(kube.requests)).toEqual([]);
    // Nothing the consolidation functions do not already use: no new right.
    expect(permissionsUsed(kube.requests)).toEqual(['create core/events', 'create core/pods/eviction', 'get core/nodes', 'list core/nodes', 'list core/pods', 'patch core/nodes']);
  });
});

describe('other notices', () => {
  it('a rebalance recommendation taints and cordons, and evicts nothing', async () => {
    clock.now = Date.parse(REBALANCE['time'] as string) + 2_000;
    const response = await invoke(REBALANCE);

    expect(nodeSpec(kube, NODE)).toMatchObject({ unschedulable: true, taints: [{ key: InterruptedTaint.key, effect: 'NoSchedule' }] });
    expect(evictions(kube)).toEqual([]);
    expect(podsOnNode()).toEqual([...LEFT, ...EVICTED].sort());
    expect(response).toMatchObject({ instances: [{ outcome: 'acted', taint: 'tainted', evicted: 0 }] });
    expect(response).not.toHaveProperty('instances.0.drain');
    expect(events(kube)).toEqual([expect.objectContaining({ node: NODE, reason: 'SpotRebalanceRecommendation', type: 'Normal' })]);
    expect(metric('eks_consolidator_interruption_nodes_tainted_total', { kind: 'rebalance_recommendation' })).toBe(1);

    // The spot warning that follows finds the taint in place and drains.
    clock.now = SPOT_TIME + 4_000;
    const spot = await invoke(SPOT);
    expect(spot).toMatchObject({ instances: [{ taint: 'alreadyTainted', drain: 'done', evicted: 3 }] });
    expect(kube.mutatingRequests().filter((r) => r.method === 'PATCH')).toHaveLength(1);
  });

  it('an AWS Health scheduled change (retirement) taints, cordons and drains', async () => {
    clock.now = Date.parse(HEALTH['time'] as string) + 5_000;
    const response = await invoke(HEALTH);

    expect(evictions(kube).map((e) => e.pod).sort()).toEqual(EVICTED);
    expect(response).toMatchObject({ notice: { kind: 'scheduledChange' }, instances: [{ outcome: 'acted', drain: 'done', evicted: 3 }] });
    expect(events(kube)[0]).toMatchObject({ reason: 'InstanceUnhealthy', type: 'Warning' });
    expect(events(kube)[0]!.message).toContain('AWS_EC2_PERSISTENT_INSTANCE_RETIREMENT_SCHEDULED');
  });

  it('a state change to terminated: logged, nothing written, not a failure', async () => {
    ec2Mock.on(DescribeInstancesCommand, { InstanceIds: [INSTANCE] }).resolves(describeAnswer(OUR_TAGS, 'terminated'));
    clock.now = Date.parse(STATE_CHANGE['time'] as string) + 1_000;
    const response = await invoke(STATE_CHANGE);

    expect(response).toMatchObject({ instances: [{ outcome: 'noAction', instanceState: 'terminated' }] });
    expect(kube.requests).toEqual([]);
    expect(jsonLines(lines).some((l) => String(l['message']).includes('nothing to drain'))).toBe(true);
  });
});

describe('instances that are not ours', () => {
  it.each([
    ["a Karpenter node's instance", KARPENTER_TAGS],
    ["another cluster's replacement", { ...OUR_TAGS, [`kubernetes.io/cluster/${CLUSTER}`]: undefined, 'kubernetes.io/cluster/other-eks': 'owned' }],
  ])('%s is ignored with a log line: no Kubernetes call at all', async (_name, tags) => {
    const defined = Object.fromEntries(Object.entries(tags).filter(([, v]) => v !== undefined)) as Record<string, string>;
    ec2Mock.on(DescribeInstancesCommand, { InstanceIds: [INSTANCE] }).resolves(describeAnswer(defined));
    const response = await invoke(SPOT);

    expect(response).toMatchObject({ instances: [{ outcome: 'notOurs' }] });
    expect(kube.requests).toEqual([]);
    const line = jsonLines(lines).find((l) => l['message'] === 'interruption: not an instance this product launched, ignored');
    expect(line).toMatchObject({ instanceId: INSTANCE, kind: 'spotInterruption', function: 'interruption', cluster: CLUSTER });
    expect(metric('eks_consolidator_interruption_messages_total', { outcome: 'not_ours' })).toBe(1);
  });

  it('an instance EC2 does not know is ignored: no Kubernetes call at all', async () => {
    ec2Mock
      .on(DescribeInstancesCommand, { InstanceIds: [INSTANCE] })
      .rejects(Object.assign(new Error(`The instance ID '${INSTANCE}' does not exist`), { name: 'InvalidInstanceID.NotFound' }));
    const response = await invoke(SPOT);

    expect(response).toMatchObject({ instances: [{ outcome: 'unknownInstance' }] });
    expect(kube.requests).toEqual([]);
  });
});

describe('when there is nothing the function may do', () => {
  it('ACTUATOR=karpenter: returns at once, no EC2 or Kubernetes call', async () => {
    const response = await invoke(SPOT, { ACTUATOR: 'karpenter' });

    expect(response).toMatchObject({ function: 'interruption', skipped: expect.stringContaining('ACTUATOR=karpenter') });
    expect(ec2Mock.calls()).toEqual([]);
    expect(eksMock.calls()).toEqual([]);
    expect(kube.requests).toEqual([]);
    expect(metric('eks_consolidator_interruption_messages_total', { kind: 'spot_interruption', outcome: 'karpenter_actuator' })).toBe(1);
  });

  it('an event it cannot read is logged and dropped, not failed (a retry would not help)', async () => {
    const response = await invoke({ version: '0', id: 'x', 'detail-type': 'Scheduled Event', source: 'aws.events', time: '2026-11-21T14:00:00Z', detail: {} });

    expect(response).toMatchObject({ skipped: expect.stringContaining('not an event this function handles') });
    expect(ec2Mock.calls()).toEqual([]);
    expect(kube.requests).toEqual([]);
  });

  it('EC2 unreachable: the invocation fails (Lambda delivers the event again), nothing written', async () => {
    ec2Mock.on(DescribeInstancesCommand).rejects(Object.assign(new Error('connect ETIMEDOUT'), { name: 'TimeoutError' }));
    await expect(invoke(SPOT)).rejects.toThrow(/delivered again/);

    expect(writes()).toEqual([]);
    expect(metric('eks_consolidator_pass_errors_total', { function: 'interruption' })).toBe(1);
  });
});
