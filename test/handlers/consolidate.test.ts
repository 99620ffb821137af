// The consolidation handler in-process: middy handler, fake Lambda context, the real Kubernetes client
// against the fake API (reached through a mocked EKS DescribeCluster and a real EKS token), EC2 and
// Pricing mocked, the state in real dynalite.
import {
  CreateFleetCommand,
  DescribeInstancesCommand,
  DescribeInstanceTypeOfferingsCommand,
  DescribeInstanceTypesCommand,
  DescribeSpotPriceHistoryCommand,
  TerminateInstancesCommand,
} from '@aws-sdk/client-ec2';
import { GetProductsCommand } from '@aws-sdk/client-pricing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoStateStore } from '../../src/adapters/dynamodb/dynamoStateStore.ts';
import { decodeEksToken } from '../../src/adapters/kubernetes/eksToken.ts';
import type { Actuator } from '../../src/app/wiring.ts';
import { demoNodePoolsPath } from '../../src/adapters/catalog/bundledPaths.ts';
import { createConsolidateHandler } from '../../src/handlers/consolidate.ts';
import { createEmptinessHandler } from '../../src/handlers/emptiness.ts';
import type { PassResponse, SkippedResponse } from '../../src/handlers/pass.ts';
import {
  CLUSTER,
  credentials,
  demoObjects,
  deps,
  ec2Mock,
  jsonLines,
  lambdaContext,
  mutatingEc2Calls,
  NOW,
  pricingMock,
  recordingActuator,
  resetWorld,
  scanTable,
  scheduledEvent,
  startHarness,
  type Harness,
} from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});
beforeEach(async () => {
  await resetWorld(h);
});

describe('a dry run', () => {
  it('returns a non-empty plan and makes no mutating call anywhere', async () => {
    const handler = createConsolidateHandler(deps(h));
    const response = (await handler({ dryRun: true }, lambdaContext())) as PassResponse;

    expect(response.dryRun).toBe(true);
    expect(response.decisions.length).toBeGreaterThan(0);
    expect(response.nodes.length).toBeGreaterThan(0);
    expect(response.pass).toMatchObject({ function: 'consolidate', scope: 'consolidation', trigger: 'manual', catalog: { source: 'bundled' } });
    expect(response.notes?.some((n) => n.includes('live catalog refresh failed'))).toBe(true);
    // A dry run projects the later waves by default (PLAN_WAVES), touching nothing either.
    expect(response.projection).toMatchObject({ stoppedBecause: expect.stringMatching(/settled|limit/) });

    // Kubernetes: only reads, with an EKS token made for this cluster.
    expect(h.kube.requests.length).toBeGreaterThan(0);
    expect(h.kube.mutatingRequests()).toEqual([]);
    const token = decodeEksToken(h.kube.requests[0]!.token!);
    expect(token.searchParams.get('Action')).toBe('GetCallerIdentity');
    expect(token.searchParams.get('X-Amz-SignedHeaders')).toContain('x-k8s-aws-id');
    // EC2: no launch, tag or termination (the Describe* of the catalog refresh were tried, and failed).
    expect(ec2Mock.calls().length).toBeGreaterThan(0);
    expect(mutatingEc2Calls()).toEqual([]);
    // DynamoDB: nothing written, not even the lease.
    expect(await scanTable(h)).toEqual([]);
  });

  it('does not write a freshly fetched live catalog into the cache', async () => {
    ec2Mock.reset();
    pricingMock.reset();
    ec2Mock.on(DescribeInstanceTypesCommand).resolves({
      InstanceTypes: [
        {
          InstanceType: 'm5.large',
          VCpuInfo: { DefaultVCpus: 2 },
          MemoryInfo: { SizeInMiB: 8192 },
          ProcessorInfo: { SupportedArchitectures: ['x86_64'] },
          NetworkInfo: { MaximumNetworkInterfaces: 3, Ipv4AddressesPerInterface: 10 },
        },
      ],
    });
    ec2Mock.on(DescribeInstanceTypeOfferingsCommand).resolves({ InstanceTypeOfferings: [{ InstanceType: 'm5.large', Location: 'us-east-1a' }] });
    ec2Mock.on(DescribeSpotPriceHistoryCommand).resolves({ SpotPriceHistory: [] });
    pricingMock.on(GetProductsCommand).resolves({
      PriceList: [
        JSON.stringify({
          product: { attributes: { instanceType: 'm5.large' } },
          terms: { OnDemand: { a: { priceDimensions: { b: { unit: 'Hrs', pricePerUnit: { USD: '0.096' } } } } } },
        }),
      ],
    });
    const handler = createConsolidateHandler(deps(h));
    const response = (await handler({ dryRun: true }, lambdaContext())) as PassResponse;
    expect(response.pass.catalog?.source).toBe('live');
    expect(await scanTable(h)).toEqual([]);
    expect(mutatingEc2Calls()).toEqual([]);
  });

  it('an event can make a run drier, never wetter', async () => {
    const actuator = recordingActuator();
    // DRY_RUN=true (the default): {"dryRun": false} is still a dry run, and says so.
    const safe = createConsolidateHandler(deps(h, {}, { actuator: actuator.factory }));
    const stillDry = (await safe({ dryRun: false }, lambdaContext())) as PassResponse;
    expect(stillDry.dryRun).toBe(true);
    expect(stillDry.notes).toContainEqual(expect.stringContaining('an event can only make a run drier'));
    // DRY_RUN=false: {"dryRun": true} plans only.
    const live = createConsolidateHandler(deps(h, { DRY_RUN: 'false' }, { actuator: actuator.factory }));
    const planned = (await live({ dryRun: true }, lambdaContext())) as PassResponse;
    expect(planned.dryRun).toBe(true);
    expect(actuator.calls).toEqual([]);
    expect(h.kube.mutatingRequests()).toEqual([]);
    expect(await scanTable(h)).toEqual([]);
  });

  it('rejects an event it cannot read, before doing anything', async () => {
    const handler = createConsolidateHandler(deps(h));
    await expect(handler({ dryRun: 'yes' } as never, lambdaContext())).rejects.toThrow(/event.dryRun must be true or false/);
    expect(h.kube.requests).toEqual([]);
    const failed = jsonLines(h.lines).find((l) => l['message'] === 'invocation failed');
    expect(failed?.['level']).toBe('ERROR');
  });
});

describe('a real run', () => {
  it('takes the lease, saves the state, records events and hands the decisions to the actuator', async () => {
    const actuator = recordingActuator();
    const handler = createConsolidateHandler(deps(h, { DRY_RUN: 'false' }, { actuator: actuator.factory }));
    const context = lambdaContext(200_000);
    const response = (await handler(scheduledEvent, context)) as PassResponse;

    expect(response.dryRun).toBe(false);
    expect(response.pass.trigger).toBe('schedule');
    // Acting, the pass projects nothing by default: the actuator uses only this pass's decisions.
    expect(response).not.toHaveProperty('projection');
    expect(response.actions).toEqual({ carriedOut: 0 });
    expect(actuator.calls).toEqual([{ decisions: response.decisions.length, owner: expect.stringMatching(new RegExp(`^${context.awsRequestId}/[0-9a-f-]{36}$`)), deadlineMs: NOW + 200_000 - 15_000 }]);
    const items = await scanTable(h);
    expect(items.some((i) => String(i['sk']).startsWith('NODE#'))).toBe(true);
    // The lease was released at the end (the item stays, holding the fencing token, with no owner).
    expect(items.find((i) => i['sk'] === 'LEASE')).toMatchObject({ token: 1, leaseUntilMs: 0 });
    expect(items.find((i) => i['sk'] === 'LEASE')).not.toHaveProperty('owner');
    // The only Kubernetes writes are events.
    const writes = h.kube.mutatingRequests();
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.every((r) => r.method === 'POST' && r.path === '/api/v1/namespaces/default/events')).toBe(true);
    // With EC2 mocked as unreachable, the mutating EC2 calls are the actuator's business, not the pass's.
    expect(mutatingEc2Calls()).toEqual([]);
  });

  it('a second overlapping invocation cannot take the lease and returns skipped cleanly', async () => {
    let release!: () => void;
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow: Actuator = {
      begin: () => ({
        resume: async () => {},
        act: async () => {
          entered();
          await gate;
        },
        report: () => ({ carriedOut: 0 }),
      }),
    };
    // Two containers: two handlers, one table.
    const first = createConsolidateHandler(deps(h, { DRY_RUN: 'false' }, { actuator: () => slow }));
    const second = createConsolidateHandler(deps(h, { DRY_RUN: 'false' }, { actuator: recordingActuator().factory }));
    const firstContext = lambdaContext();
    const running = first(scheduledEvent, firstContext);
    await inside;

    const writesBefore = h.kube.mutatingRequests().length;
    const itemsBefore = await scanTable(h);
    const skipped = (await second(scheduledEvent, lambdaContext())) as SkippedResponse;
    expect(skipped).toMatchObject({ skipped: 'lease held', heldBy: expect.stringContaining(firstContext.awsRequestId), pass: { function: 'consolidate' } });
    expect(h.kube.mutatingRequests().length).toBe(writesBefore);
    expect(await scanTable(h)).toEqual(itemsBefore);
    const skippedLine = jsonLines(h.lines).find((l) => l['message'] === 'pass skipped: another pass holds the lease');
    expect(skippedLine?.['heldBy']).toContain(firstContext.awsRequestId);

    release();
    const done = (await running) as PassResponse;
    expect(done.decisions.length).toBeGreaterThan(0);
    const store = new DynamoStateStore({ client: h.db.client, tableName: h.table, clusterName: CLUSTER });
    expect(await store.readLease()).toBeUndefined();
  });

  it('a retried delivery with the same request id does not share the lease', async () => {
    let release!: () => void;
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow: Actuator = {
      begin: () => ({
        resume: async () => {},
        act: async () => {
          entered();
          await gate;
        },
        report: () => ({ carriedOut: 0 }),
      }),
    };
    const actuator = recordingActuator();
    const first = createConsolidateHandler(deps(h, { DRY_RUN: 'false' }, { actuator: () => slow }));
    const second = createConsolidateHandler(deps(h, { DRY_RUN: 'false' }, { actuator: actuator.factory }));
    const context = lambdaContext();
    const running = first(scheduledEvent, context);
    await inside;
    // The same awsRequestId: an at-least-once delivery of the same scheduled event.
    const again = (await second(scheduledEvent, context)) as SkippedResponse;
    expect(again).toMatchObject({ skipped: 'lease held' });
    expect(actuator.calls).toEqual([]);
    release();
    await running;
  });

  it('refuses to act when the lease would not outlive the invocation', async () => {
    const handler = createConsolidateHandler(deps(h, { DRY_RUN: 'false', FUNCTION_TIMEOUT_SECONDS: '120', LEASE_TTL_SECONDS: '180' }));
    await expect(handler(scheduledEvent, lambdaContext(300_000))).rejects.toThrow(/LEASE_TTL_SECONDS: 180 s is not longer than this invocation may run/);
    expect(h.kube.mutatingRequests()).toEqual([]);
  });

  it('the emptiness function owns the WhenEmpty pools only', async () => {
    const handler = createEmptinessHandler(deps(h));
    const response = (await handler({ dryRun: true }, lambdaContext())) as PassResponse;
    // The demo's pools are WhenEmptyOrUnderutilized: they belong to the consolidation function.
    expect(response.pass.scope).toBe('emptiness');
    expect(response.decisions).toEqual([]);
    expect(response.nodes.every((n) => !n.candidate)).toBe(true);
  });
});

describe('warm containers', () => {
  it('builds the clients once and reuses them', async () => {
    const handler = createConsolidateHandler(deps(h));
    await handler({ dryRun: true }, lambdaContext());
    await handler({ dryRun: true }, lambdaContext());
    expect(await import('./harness.ts').then((m) => m.eksMock.calls().length)).toBe(1);
  });

  it('a failed cold start (EKS unreachable) is retried on the next invocation', async () => {
    const { eksMock } = await import('./harness.ts');
    const { DescribeClusterCommand } = await import('@aws-sdk/client-eks');
    eksMock.reset();
    eksMock
      .on(DescribeClusterCommand)
      .rejectsOnce(Object.assign(new Error('User is not authorized to perform: eks:DescribeCluster'), { name: 'AccessDeniedException' }))
      .resolves({ cluster: { endpoint: h.kube.url, certificateAuthority: { data: h.kube.caData } } });
    const handler = createConsolidateHandler({ ...deps(h), overrides: { credentials } });
    await expect(handler({ dryRun: true }, lambdaContext())).rejects.toThrow(/eks:DescribeCluster failed: AccessDeniedException/);
    const errors = jsonLines(h.lines).filter((l) => l['level'] === 'ERROR');
    expect(errors.map((l) => l['message'])).toContain('invocation failed');
    const emf = jsonLines(h.lines).filter((l) => '_aws' in l);
    expect(emf.some((l) => l['eks_consolidator_pass_errors_total'] === 1)).toBe(true);
    const response = (await handler({ dryRun: true }, lambdaContext())) as PassResponse;
    expect(response.decisions.length).toBeGreaterThan(0);
  });
});

describe('a real run with the real executor', () => {
  it('carries out the deletions, and a replacement without launch settings changes nothing', async () => {
    // EC2 answers for the instances of the demo nodes; launching is never reached (the demo NodePools
    // have no eks-consolidator/launch-template annotation).
    ec2Mock.on(DescribeInstancesCommand).callsFake((input: { InstanceIds?: string[] }) => ({
      Reservations: [{ Instances: (input.InstanceIds ?? []).map((id) => ({ InstanceId: id, State: { Name: 'running' } })) }],
    }));
    ec2Mock.on(TerminateInstancesCommand).callsFake((input: { InstanceIds: string[] }) => ({
      TerminatingInstances: input.InstanceIds.map((id) => ({ InstanceId: id, CurrentState: { Name: 'shutting-down' } })),
    }));
    const instanceOf = new Map(
      (demoObjects() as { kind: string; metadata: { name: string }; spec?: { providerID?: string } }[])
        .filter((o) => o.kind === 'Node')
        .map((o) => [o.metadata.name, o.spec?.providerID?.split('/').pop() ?? '']),
    );
    const handler = createConsolidateHandler({
      ...deps(h, { DRY_RUN: 'false' }),
      overrides: { credentials, act: { sleep: async () => {}, options: { pollIntervalMs: 1_000, maxWaitMs: 5_000 } } },
    });
    const response = (await handler(scheduledEvent, lambdaContext())) as PassResponse & {
      actions: { commands: { nodes: string[]; step: string; terminatedInstances: string[] }[]; skipped: { nodes: string[]; why: string }[] };
    };

    const deletions = response.decisions.filter((d) => d.action === 'delete');
    const replacements = response.decisions.filter((d) => d.action === 'replace');
    expect(deletions.length).toBeGreaterThan(0);
    const deletedNodes = deletions.flatMap((d) => d.nodes);
    // Every deletion ran to the end: instance terminated, Node object deleted.
    for (const node of deletedNodes) {
      expect(h.kube.store.get('Node', node), node).toBeUndefined();
    }
    const terminated = ec2Mock.commandCalls(TerminateInstancesCommand).flatMap((c) => c.args[0].input.InstanceIds ?? []);
    expect(terminated.sort()).toEqual(deletedNodes.map((n) => instanceOf.get(n)).sort());
    expect(ec2Mock.commandCalls(CreateFleetCommand)).toEqual([]);
    // The replacements' nodes are still there, schedulable and without the disruption taint.
    for (const node of replacements.flatMap((d) => d.nodes)) {
      const object = h.kube.store.get('Node', node) as { spec?: { unschedulable?: boolean; taints?: { key: string }[] } } | undefined;
      expect(object, node).toBeDefined();
      expect(object!.spec?.unschedulable ?? false).toBe(false);
      expect((object!.spec?.taints ?? []).map((t) => t.key)).not.toContain('karpenter.sh/disrupted');
    }
    // Pods moved only through the Eviction API; no pod was deleted directly.
    const writes = h.kube.mutatingRequests();
    expect(writes.filter((r) => r.method === 'DELETE' && r.path.includes('/pods/'))).toEqual([]);
    expect(writes.filter((r) => r.path.endsWith('/eviction')).length).toBe(deletions.reduce((n, d) => n + d.evictedPods.length, 0));
    // The commands are in the table, and the lease is released.
    const items = await scanTable(h);
    expect(items.filter((i) => String(i['sk']).startsWith('CMD#')).length).toBeGreaterThanOrEqual(deletions.length);
    expect(items.find((i) => i['sk'] === 'LEASE')).not.toHaveProperty('owner');
    expect(response.actions.commands.filter((c) => c.terminatedInstances.length > 0).length).toBe(deletions.length);
    const stepOf = (nodes: readonly string[]) => response.actions.commands.find((c) => c.nodes.join() === nodes.join())?.step;
    for (const d of deletions) expect(stepOf(d.nodes)).toBe('done');
    for (const d of replacements) expect(stepOf(d.nodes)).toBe('rolledBack');

    // Karpenter's log line for every command started, with its fields (what queries on Karpenter's logs look for).
    const disrupting = jsonLines(h.lines).filter((l) => l['message'] === 'disrupting node(s)');
    expect(disrupting).toHaveLength(response.decisions.length);
    for (const d of response.decisions) {
      const line = disrupting.find((l) => (l['disrupted-nodes'] as { Node: { name: string } }[]).map((n) => n.Node.name).join() === d.nodes.join());
      expect(line, d.nodes.join()).toMatchObject({
        level: 'INFO',
        service: 'eks-consolidator',
        'command-id': expect.any(String),
        reason: d.reason.toLowerCase(),
        decision: d.action,
        'disrupted-node-count': d.nodes.length,
        'replacement-node-count': d.replacements.length,
        'pod-count': d.evictedPods.length,
        dryRun: false,
      });
      const seen = response.nodes.find((n) => n.name === d.nodes[0]);
      expect((line!['disrupted-nodes'] as Record<string, unknown>[])[0]).toEqual({
        Node: { name: d.nodes[0] },
        'instance-type': seen?.instanceType,
        'capacity-type': seen?.capacityType,
      });
      if (d.replacements.length === 1) {
        expect(line!['replacement-nodes']).toEqual([{ 'capacity-type': d.replacements[0]!.capacityType, 'instance-types': expect.stringContaining(d.replacements[0]!.instanceTypes[0]!) }]);
      }
    }
  });
});

describe('next to Karpenter (KARPENTER=auto)', () => {
  it('a real run leaves the pools Karpenter consolidates alone and says why; a dry run still plans them', async () => {
    const dry = (await createConsolidateHandler(deps(h, { KARPENTER: 'auto' }))({ dryRun: true }, lambdaContext())) as PassResponse;
    expect(dry.decisions.length).toBeGreaterThan(0);
    expect(dry.notes).toContainEqual(expect.stringMatching(/^a real run would not act on NodePools "default", "batch": Karpenter's own disruption controller/));

    const actuator = recordingActuator();
    const real = (await createConsolidateHandler(deps(h, { DRY_RUN: 'false', KARPENTER: 'auto' }, { actuator: actuator.factory }))(
      scheduledEvent,
      lambdaContext(),
    )) as PassResponse;
    expect(real.decisions).toEqual([]);
    expect(actuator.calls).toEqual([{ decisions: 0, owner: expect.any(String), deadlineMs: expect.any(Number) }]);
    const managed = real.nodes.filter((n) => n.nodePool === 'default');
    expect(managed.length).toBeGreaterThan(0);
    for (const n of managed) expect(n.reasons.join(' ')).toMatch(/Karpenter's own disruption controller also consolidates NodePool "default"/);
  });

  it('a pool handed over with the annotation (and consolidateAfter: Never for Karpenter) is acted on', async () => {
    const { readFileSync, writeFileSync, mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { parseAllDocuments, stringify } = await import('yaml');
    const docs = parseAllDocuments(readFileSync(demoNodePoolsPath, 'utf8')).map((d) => d.toJS() as Record<string, Record<string, unknown>>);
    const handedOver = docs.map((doc) => {
      const spec = doc['spec'] as Record<string, unknown>;
      const disruption = spec['disruption'] as Record<string, unknown>;
      return {
        ...doc,
        metadata: { ...doc['metadata'], annotations: { 'eks-consolidator.io/disruption': JSON.stringify(disruption) } },
        spec: { ...spec, disruption: { consolidateAfter: 'Never' } },
      };
    });
    const file = join(mkdtempSync(join(tmpdir(), 'ekc-handover-')), 'nodepools.yaml');
    writeFileSync(file, handedOver.map((d) => stringify(d)).join('---\n'));
    const dry = (await createConsolidateHandler(deps(h))({ dryRun: true }, lambdaContext())) as PassResponse;
    const actuator = recordingActuator();
    const real = (await createConsolidateHandler(deps(h, { DRY_RUN: 'false', KARPENTER: 'auto', NODEPOOLS_SOURCE: `file:${file}` }, { actuator: actuator.factory }))(
      scheduledEvent,
      lambdaContext(),
    )) as PassResponse;
    expect(real.notes?.join(' ') ?? '').not.toMatch(/Karpenter's own disruption controller/);
    expect(real.decisions.map((d) => d.nodes)).toEqual(dry.decisions.map((d) => d.nodes));
    expect(real.decisions.length).toBeGreaterThan(0);
  });
});
