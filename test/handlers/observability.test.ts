// Logs, EMF metrics and Kubernetes events as the handlers produce them.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EventDeduper, nodeEventsFor, publishNodeEvents, type NodeEventSpec } from '../../src/app/observability/events.ts';
import { Logger } from '../../src/app/observability/logger.ts';
import { emfLines, isThresholdBlocked } from '../../src/app/observability/metrics.ts';
import { createConsolidateHandler } from '../../src/handlers/consolidate.ts';
import type { PassResponse } from '../../src/handlers/pass.ts';
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

describe('EMF metrics', () => {
  it('every stdout line of a pass is JSON; the EMF ones are valid documents with the metric names', async () => {
    const handler = createConsolidateHandler(deps(h));
    const response = (await handler({ dryRun: true }, lambdaContext())) as PassResponse;

    const records = jsonLines(h.lines); // throws if any line is not JSON
    const emf = records.filter((r) => '_aws' in r) as unknown as EmfDocument[];
    expect(emf.length).toBeGreaterThan(0);
    const names = new Set<string>();
    for (const doc of emf) {
      expect(doc._aws.Timestamp).toBe(NOW);
      for (const directive of doc._aws.CloudWatchMetrics) {
        expect(directive.Namespace).toBe('EksConsolidator');
        for (const dimensionSet of directive.Dimensions) {
          expect(dimensionSet).toContain('cluster');
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

  it('groups data points sharing dimensions into one document and adds up repeats', () => {
    const lines = emfLines(
      [
        { name: 'a_total', unit: 'Count', value: 1, dimensions: { cluster: 'c', pool: 'p' } },
        { name: 'a_total', unit: 'Count', value: 2, dimensions: { pool: 'p', cluster: 'c' } },
        { name: 'b_seconds', unit: 'Seconds', value: 0.5, dimensions: { cluster: 'c', pool: 'p' } },
        { name: 'a_total', unit: 'Count', value: 7, dimensions: { cluster: 'c', pool: 'q' } },
      ],
      1_000,
    );
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      {
        _aws: {
          Timestamp: 1_000,
          CloudWatchMetrics: [
            { Namespace: 'EksConsolidator', Dimensions: [['cluster', 'pool']], Metrics: [{ Name: 'a_total', Unit: 'Count' }, { Name: 'b_seconds', Unit: 'Seconds' }] },
          ],
        },
        cluster: 'c',
        pool: 'p',
        a_total: 3,
        b_seconds: 0.5,
      },
      {
        _aws: { Timestamp: 1_000, CloudWatchMetrics: [{ Namespace: 'EksConsolidator', Dimensions: [['cluster', 'pool']], Metrics: [{ Name: 'a_total', Unit: 'Count' }] }] },
        cluster: 'c',
        pool: 'q',
        a_total: 7,
      },
    ]);
  });
});

describe('structured logs', () => {
  it('one JSON object per line, with level, message, pass id and function', async () => {
    const handler = createConsolidateHandler(deps(h));
    const context = lambdaContext();
    await handler({ dryRun: true }, context);
    const logs = jsonLines(h.lines).filter((r) => 'message' in r);
    expect(logs.map((l) => l['message'])).toEqual(expect.arrayContaining(['pass started', 'decision planned', 'pass finished']));
    for (const log of logs) {
      expect(log).toMatchObject({ level: 'info', passId: context.awsRequestId, function: 'consolidate', cluster: 'demo-cluster', dryRun: true });
      expect(Date.parse(log['time'] as string)).toBe(NOW);
    }
  });

  it('drops lines below the configured level', () => {
    const lines: string[] = [];
    const log = new Logger((l) => lines.push(l), 'warn');
    log.info('quiet');
    log.warn('loud', { error: new Error('boom') });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'warn', message: 'loud', error: { name: 'Error', message: 'boom' } });
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
    const log = new Logger(() => {}, 'error');
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
