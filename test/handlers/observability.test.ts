// Logs, EMF metrics and Kubernetes events as the handlers produce them (Powertools for AWS Lambda writes
// the log lines and the EMF documents; these tests read what reaches stdout).
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EventDeduper, nodeEventsFor, publishNodeEvents, type NodeEventSpec } from '../../src/app/observability/events.ts';
import { isThresholdBlocked, METRICS_NAMESPACE, publishMetrics } from '../../src/app/observability/metrics.ts';
import { createConsolidateHandler } from '../../src/handlers/consolidate.ts';
import type { PassResponse } from '../../src/handlers/pass.ts';
import { captureStdout } from '../support/stdout.ts';
import { deps, jsonLines, lambdaContext, NOW, recordingActuator, resetWorld, scheduledEvent, startHarness, type Harness } from './harness.ts';

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

const KARPENTER_METRICS = [
  'karpenter_voluntary_disruption_decisions_total',
  'karpenter_voluntary_disruption_eligible_nodes',
  'karpenter_nodepools_allowed_disruptions',
  'karpenter_consolidation_threshold_blocked_total',
  'eks_consolidator_pass_duration_seconds',
];

interface EmfDocument {
  _aws: { Timestamp: number; CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
  [key: string]: unknown;
}

const emfOf = (lines: readonly string[]) => jsonLines(lines).filter((r) => '_aws' in r) as unknown as EmfDocument[];

describe('EMF metrics', () => {
  it('every stdout line of a pass is JSON; the EMF ones are valid documents with the metric names', async () => {
    const handler = createConsolidateHandler(deps(h));
    const response = (await handler({ dryRun: true }, lambdaContext())) as PassResponse;

    jsonLines(h.lines); // throws if any line is not JSON
    const emf = emfOf(h.lines);
    expect(emf.length).toBeGreaterThan(0);
    const names = new Set<string>();
    for (const doc of emf) {
      expect(Number.isInteger(doc._aws.Timestamp)).toBe(true);
      expect(doc._aws.CloudWatchMetrics).toHaveLength(1);
      for (const directive of doc._aws.CloudWatchMetrics) {
        expect(directive.Namespace).toBe('EksConsolidator');
        expect(directive.Dimensions).toHaveLength(1);
        for (const dimensionSet of directive.Dimensions) {
          // Powertools' service dimension, then ours; at most 29 per set (EMF's limit is 30).
          expect(dimensionSet.slice(0, 2)).toEqual(['service', 'cluster']);
          expect(dimensionSet.length).toBeLessThan(30);
          expect(doc['service']).toBe('eks-consolidator');
          expect(doc['cluster']).toBe('demo-cluster');
          for (const dimension of dimensionSet) expect(typeof doc[dimension]).toBe('string');
        }
        for (const metric of directive.Metrics) {
          names.add(metric.Name);
          expect(typeof doc[metric.Name]).toBe('number');
          expect(['Count', 'Seconds']).toContain(metric.Unit);
        }
      }
    }
    for (const name of KARPENTER_METRICS) expect(names).toContain(name);

    // Decisions by Karpenter's labels: one data point per decision, marked as planned.
    const decisions = emf.filter((d) => 'karpenter_voluntary_disruption_decisions_total' in d);
    const total = decisions.reduce((sum, d) => sum + (d['karpenter_voluntary_disruption_decisions_total'] as number), 0);
    expect(total).toBe(response.decisions.length);
    for (const d of decisions) {
      expect(['delete', 'replace']).toContain(d['decision']);
      expect(['empty', 'single', 'multi']).toContain(d['consolidation_type']);
      expect(['empty', 'underutilized']).toContain(d['reason']);
      expect(d['dry_run']).toBe('true');
    }
    // The savings threshold: one metric per pool, counting the plan's threshold-blocked nodes.
    const blocked = emf.filter((d) => 'karpenter_consolidation_threshold_blocked_total' in d);
    const expectedBlocked = response.nodes.filter((n) => n.reasons.some(isThresholdBlocked)).length;
    expect(blocked.reduce((s, d) => s + (d['karpenter_consolidation_threshold_blocked_total'] as number), 0)).toBe(expectedBlocked);
    expect(new Set(blocked.map((d) => d['nodepool']))).toEqual(new Set(['default', 'batch']));
    // Budgets: the demo's default pool allows 20% of 26 nodes (6) on a Saturday.
    const allowed = emf.find((d) => d['nodepool'] === 'default' && d['reason'] === 'underutilized' && 'karpenter_nodepools_allowed_disruptions' in d);
    expect(allowed?.['karpenter_nodepools_allowed_disruptions']).toBe(6);
  });

  it('a stored command this build cannot read: one warning naming its key, and a count, while the pass goes on', async () => {
    const doc = DynamoDBDocumentClient.from(h.db.client);
    await doc.send(
      new PutCommand({
        TableName: h.table,
        Item: { pk: 'CLUSTER#demo-cluster', sk: 'CMD#cmd-from-newer-build', id: 'cmd-from-newer-build', createdAt: NOW, updatedAt: NOW, nodes: ['x'], method: 'single-node', reason: 'Underutilized', step: 'draining', version: 1 },
      }),
    );
    // A dry run reads the state too (and writes nothing).
    const response = (await createConsolidateHandler(deps(h))({ dryRun: true }, lambdaContext())) as PassResponse;
    expect(response.decisions.length).toBeGreaterThan(0);
    const warnings = jsonLines(h.lines).filter((r) => r['message'] === 'state record skipped: this build cannot read it');
    expect(warnings).toEqual([expect.objectContaining({ level: 'WARN', key: 'CMD#cmd-from-newer-build', problem: expect.stringContaining('step: not one of') })]);
    const counted = emfOf(h.lines).filter((d) => 'eks_consolidator_state_records_unreadable_total' in d);
    expect(counted.map((d) => d['eks_consolidator_state_records_unreadable_total'])).toEqual([1]);
  });

  it('the pass duration leaves with the logMetrics flush, under the function dimension', async () => {
    await createConsolidateHandler(deps(h))({ dryRun: true }, lambdaContext());
    const duration = emfOf(h.lines).filter((d) => 'eks_consolidator_pass_duration_seconds' in d);
    expect(duration).toHaveLength(1);
    expect(duration[0]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'cluster', 'function']]);
    expect(duration[0]!._aws.CloudWatchMetrics[0]!.Metrics).toEqual([{ Name: 'eks_consolidator_pass_duration_seconds', Unit: 'Seconds' }]);
    expect(duration[0]).toMatchObject({ function: 'consolidate', eks_consolidator_pass_duration_seconds: expect.any(Number) });
    // The Karpenter-named metrics do not carry it.
    const decisions = emfOf(h.lines).filter((d) => 'karpenter_voluntary_disruption_decisions_total' in d);
    expect(decisions.length).toBeGreaterThan(0);
    for (const d of decisions) expect(d).not.toHaveProperty('function');
  });

  it('publishMetrics adds up repeats, one document per metric and dimensions; dimensionless data waits for the flush', () => {
    const lines: string[] = [];
    const release = captureStdout(lines);
    try {
      const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'eks-consolidator', defaultDimensions: { cluster: 'c' } });
      publishMetrics(metrics, [
        { name: 'a_total', unit: 'Count', value: 1, dimensions: { pool: 'p' } },
        { name: 'a_total', unit: 'Count', value: 2, dimensions: { pool: 'p' } },
        { name: 'b_seconds', unit: 'Seconds', value: 0.5, dimensions: { pool: 'p' } },
        { name: 'a_total', unit: 'Count', value: 7, dimensions: { pool: 'q' } },
        { name: 'c_total', unit: 'Count', value: 4, dimensions: {} },
      ]);
      const published = emfOf(lines).map(({ _aws, ...rest }) => ({ dimensions: _aws.CloudWatchMetrics[0]!.Dimensions, metrics: _aws.CloudWatchMetrics[0]!.Metrics, rest }));
      expect(published).toEqual([
        { dimensions: [['service', 'cluster', 'pool']], metrics: [{ Name: 'a_total', Unit: 'Count' }], rest: { service: 'eks-consolidator', cluster: 'c', pool: 'p', a_total: 3 } },
        { dimensions: [['service', 'cluster', 'pool']], metrics: [{ Name: 'b_seconds', Unit: 'Seconds' }], rest: { service: 'eks-consolidator', cluster: 'c', pool: 'p', b_seconds: 0.5 } },
        { dimensions: [['service', 'cluster', 'pool']], metrics: [{ Name: 'a_total', Unit: 'Count' }], rest: { service: 'eks-consolidator', cluster: 'c', pool: 'q', a_total: 7 } },
      ]);
      metrics.publishStoredMetrics();
      expect(emfOf(lines).at(-1)).toMatchObject({ service: 'eks-consolidator', cluster: 'c', c_total: 4 });
    } finally {
      release();
    }
  });
});

describe('structured logs', () => {
  it("one Powertools JSON object per line: level, message, timestamp, service, the Lambda context, pass id and function", async () => {
    const handler = createConsolidateHandler(deps(h));
    const context = lambdaContext();
    await handler({ dryRun: true }, context);
    const logs = jsonLines(h.lines).filter((r) => 'message' in r);
    expect(logs.map((l) => l['message'])).toEqual(expect.arrayContaining(['pass started', 'decision planned', 'pass finished']));
    for (const log of logs) {
      expect(log).toMatchObject({
        level: 'INFO',
        service: 'eks-consolidator',
        cold_start: expect.any(Boolean),
        function_name: context.functionName,
        function_arn: context.invokedFunctionArn,
        function_memory_size: context.memoryLimitInMB,
        function_request_id: context.awsRequestId,
        passId: context.awsRequestId,
        function: 'consolidate',
        cluster: 'demo-cluster',
        dryRun: true,
      });
      expect(new Date(log['timestamp'] as string).toISOString()).toBe(log['timestamp']);
    }
    // A dry run plans; it never logs Karpenter's "disrupting node(s)".
    expect(logs.map((l) => l['message'])).not.toContain('disrupting node(s)');
  });

  it('the next invocation of the container: not a cold start, its own request id, no keys left over', async () => {
    const handler = createConsolidateHandler(deps(h));
    await handler({ dryRun: true }, lambdaContext());
    h.lines.length = 0;
    const second = lambdaContext();
    await handler(null, second);
    const logs = jsonLines(h.lines).filter((r) => 'message' in r);
    expect(logs.length).toBeGreaterThan(0);
    for (const log of logs) expect(log).toMatchObject({ cold_start: false, function_request_id: second.awsRequestId, passId: second.awsRequestId });
  });

  it('drops lines below LOG_LEVEL; metrics are still published', async () => {
    await createConsolidateHandler(deps(h, { LOG_LEVEL: 'warn' }))({ dryRun: true }, lambdaContext());
    expect(jsonLines(h.lines).filter((r) => 'message' in r && r['level'] === 'INFO')).toEqual([]);
    expect(emfOf(h.lines).length).toBeGreaterThan(0);
  });

  it('an error is logged with its name, message and stack', () => {
    const lines: string[] = [];
    const release = captureStdout(lines);
    try {
      const log = new Logger({ serviceName: 'eks-consolidator', logLevel: 'WARN' });
      log.info('quiet');
      log.warn('loud', { error: new Error('boom') });
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'WARN', message: 'loud', error: { name: 'Error', message: 'boom', stack: expect.any(String) } });
    } finally {
      release();
    }
  });
});

describe('Kubernetes events', () => {
  const eventPosts = () => h.kube.mutatingRequests().filter((r) => r.method === 'POST' && r.path === '/api/v1/namespaces/default/events');
  const bodies = (posts: ReturnType<typeof eventPosts>) =>
    posts.map((p) => p.body as { reason: string; message: string; involvedObject: { kind: string; name: string } });

  it('are never sent by a dry run', async () => {
    const handler = createConsolidateHandler(deps(h));
    await handler({ dryRun: true }, lambdaContext());
    expect(eventPosts()).toEqual([]);
  });

  it('carry Karpenter reasons and are deduplicated across passes in one container', async () => {
    let now = NOW;
    const handler = createConsolidateHandler(deps(h, { DRY_RUN: 'false' }, { actuator: recordingActuator().factory, clock: () => now }));

    const first = (await handler(scheduledEvent, lambdaContext())) as PassResponse;
    const firstPosts = bodies(eventPosts());
    expect(firstPosts.length).toBeGreaterThan(0);
    expect(first.events).toMatchObject({ sent: firstPosts.length, failed: 0 });
    expect(new Set(firstPosts.map((b) => b.reason))).toEqual(new Set(['Unconsolidatable', 'DisruptionBlocked']));
    for (const body of firstPosts) expect(body.involvedObject.kind).toBe('Node');
    // Unconsolidatable carries the plan's reason for the candidate.
    const unconsolidatable = firstPosts.find((b) => b.reason === 'Unconsolidatable')!;
    const node = first.nodes.find((n) => n.name === unconsolidatable.involvedObject.name)!;
    expect(node.candidate).toBe(true);
    expect(unconsolidatable.message).toBe(node.reasons.join('; '));
    // Nodes the plan disrupts get none.
    const disrupted = new Set(first.decisions.flatMap((d) => d.nodes));
    expect(firstPosts.filter((b) => disrupted.has(b.involvedObject.name))).toEqual([]);

    // Two minutes later, the same container: the same events are not sent again.
    now += 2 * 60_000;
    h.kube.requests.length = 0;
    const second = (await handler(scheduledEvent, lambdaContext())) as PassResponse;
    const secondPosts = bodies(eventPosts());
    const key = (b: { reason: string; message: string; involvedObject: { name: string } }) =>
      EventDeduper.key({ nodeName: b.involvedObject.name, reason: b.reason as NodeEventSpec['reason'], message: b.message, type: 'Normal' });
    const firstKeys = new Set(firstPosts.map(key));
    expect(secondPosts.filter((b) => firstKeys.has(key(b)))).toEqual([]);
    expect(secondPosts).toEqual([]);
    expect(second.events).toEqual({ sent: 0, deduplicated: firstPosts.length, failed: 0, capped: 0 });
  });

  it('a duplicate goes out again once the 15 minutes are over; a failed send is retried next pass', async () => {
    const sent: NodeEventSpec[] = [];
    let failNext = true;
    const writer = {
      createEvent: async (event: NodeEventSpec) => {
        if (failNext) {
          failNext = false;
          throw new Error('etcd is slow');
        }
        sent.push(event);
        return 'x';
      },
    };
    const deduper = new EventDeduper();
    const log = new Logger({ logLevel: 'SILENT' });
    const event: NodeEventSpec = { nodeName: 'n1', reason: 'Unconsolidatable', type: 'Normal', message: 'last pod event 3m ago' };
    expect(await publishNodeEvents([event], writer, deduper, 0, log)).toMatchObject({ sent: 0, failed: 1 });
    expect(await publishNodeEvents([event], writer, deduper, 60_000, log)).toMatchObject({ sent: 1 });
    // Digits do not make a new event.
    expect(await publishNodeEvents([{ ...event, message: 'last pod event 8m ago' }], writer, deduper, 120_000, log)).toMatchObject({
      sent: 0,
      deduplicated: 1,
    });
    // Another reason or node does.
    expect(await publishNodeEvents([{ ...event, reason: 'DisruptionBlocked' }, { ...event, nodeName: 'n2' }], writer, deduper, 180_000, log)).toMatchObject({
      sent: 2,
    });
    expect(await publishNodeEvents([event], writer, deduper, 60_000 + 15 * 60_000, log)).toMatchObject({ sent: 1 });
    expect(sent).toHaveLength(4);
  });

  it('waiting out consolidateAfter is not "blocked"; a skipped search weighs nothing', () => {
    const pool = { name: 'p', consolidationPolicy: 'WhenEmptyOrUnderutilized' } as never;
    const base = { leaseAcquired: true, state: { nodes: {}, cluster: { version: 0 }, commands: [] }, nodePools: [pool] };
    const plan = (nodes: unknown[], notes: string[] = []) => ({ dryRun: false, evaluatedAt: '', decisions: [], nodes, notes }) as never;
    const waiting = { name: 'a', nodePool: 'p', candidate: false, reasons: ['last pod event 1m ago; NodePool "p" waits consolidateAfter 5m (until x)'] };
    const pdb = { name: 'b', nodePool: 'p', candidate: false, reasons: ['pod x/y is protected by PodDisruptionBudget x/z, which allows no disruptions now'] };
    const skipped = { name: 'c', nodePool: 'p', candidate: true, reasons: ['search skipped: nothing changed'] };
    const events = nodeEventsFor({ ...base, plan: plan([waiting, pdb, skipped], ['search skipped: nothing changed']) }, 'consolidation');
    expect(events).toEqual([
      { nodeName: 'b', reason: 'DisruptionBlocked', type: 'Normal', message: `Cannot disrupt Node: ${pdb.reasons[0]}` },
    ]);
    // Out of scope: the emptiness function says nothing about a WhenEmptyOrUnderutilized pool.
    expect(nodeEventsFor({ ...base, plan: plan([pdb]) }, 'emptiness')).toEqual([]);
  });
});
