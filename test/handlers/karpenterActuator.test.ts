// The consolidation handler acting through Karpenter: the demo cluster served by the fake Kubernetes API
// with its NodePools (handed over: `consolidateAfter: Never` for Karpenter, our settings in the
// annotation) and a NodeClaim for every node, Karpenter's stand-in running on the test's clock, EC2
// mocked (and never called to launch or terminate), the state in dynalite.
import { readFileSync } from 'node:fs';
import { CreateFleetCommand, RunInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bundledCatalogPath, demoNodePoolsPath } from '../../src/adapters/catalog/bundledPaths.ts';
import { createConsolidateHandler } from '../../src/handlers/consolidate.ts';
import type { PassResponse } from '../../src/handlers/pass.ts';
import { KARPENTER_NODE_LABELS, nodeClaimFor } from '../act/harness.ts';
import { attachKarpenter, type FakeKarpenter } from '../support/fakeKarpenter.ts';
import { NOW, credentials, deps, ec2Mock, lambdaContext, resetWorld, scheduledEvent, startHarness, type Harness } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** The demo's NodePools as a cluster holds them, handed over to this product. */
function handedOverPools(): Record<string, unknown>[] {
  return parseAllDocuments(readFileSync(demoNodePoolsPath, 'utf8')).map((d) => {
    const doc = d.toJS() as Record<string, Record<string, unknown>>;
    const spec = doc['spec'] as Record<string, unknown>;
    return {
      ...doc,
      metadata: {
        ...doc['metadata'],
        uid: `uid-nodepool-${String(doc['metadata']!['name'])}`,
        annotations: {
          'eks-consolidator.io/disruption': JSON.stringify(spec['disruption']),
          'karpenter.sh/nodepool-hash': '555',
          'karpenter.sh/nodepool-hash-version': 'v3',
        },
      },
      spec: { ...spec, disruption: { consolidateAfter: 'Never' } },
    };
  });
}

const CATALOG = (JSON.parse(readFileSync(bundledCatalogPath, 'utf8')) as { instanceTypes: { name: string; capacity: Record<string, string>; allocatable: Record<string, string> }[] }).instanceTypes;

let clock: { nowMs: number };
let karpenter: FakeKarpenter;

beforeEach(async () => {
  await resetWorld(h);
  clock = { nowMs: NOW };
  h.kube.installKarpenterCrds();
  for (const pool of handedOverPools()) h.kube.store.put(pool);
  for (const node of h.kube.store.list('Node')) {
    const labels = ((node['metadata'] as Record<string, unknown>)['labels'] ?? {}) as Record<string, string>;
    if (labels['karpenter.sh/nodepool'] === undefined) continue;
    h.kube.store.put({ ...node, metadata: { ...(node['metadata'] as object), labels: { ...labels, ...KARPENTER_NODE_LABELS, team: labels['team'] ?? '' } } });
    h.kube.store.put(nodeClaimFor(node));
  }
  // Karpenter's AWS provider registers a node with its type's real allocatable: the bundled catalog's.
  karpenter = attachKarpenter(h.kube, {
    now: () => clock.nowMs,
    launchChoice: (claim) => {
      const requirement = ((claim['spec'] as { requirements: { key: string; values?: string[] }[] }).requirements ?? []).find((r) => r.key === 'node.kubernetes.io/instance-type');
      const type = CATALOG.find((t) => t.name === requirement?.values?.[0]);
      return type === undefined ? {} : { capacity: type.capacity, allocatable: type.allocatable };
    },
  });
});

function handler(extra: Record<string, string>) {
  return createConsolidateHandler({
    ...deps(h, { NODEPOOLS_SOURCE: 'kubernetes', KARPENTER: 'auto', ...extra }, { clock: () => clock.nowMs }),
    overrides: {
      credentials,
      act: {
        sleep: async (ms) => {
          clock.nowMs += ms;
        },
        options: { pollIntervalMs: 10_000, maxWaitMs: 10 * 60_000 },
      },
    },
  });
}

type ActingResponse = PassResponse & {
  actions: { commands: { nodes: string[]; step: string; replacements?: { ref: string; nodeName?: string }[] }[]; skipped: { nodes: string[]; why: string }[] };
};

describe('a real run on a cluster Karpenter serves (ACTUATOR=auto)', () => {
  it('plans through Karpenter, carries out every decision the dry run shows with NodeClaims, and never calls EC2 to launch or terminate', async () => {
    const dry = (await handler({})({ dryRun: true }, lambdaContext())) as PassResponse;
    expect(dry.decisions.length).toBeGreaterThan(0);
    expect(Object.values(dry.actuators ?? {}).map((a) => a.actuator)).toEqual(expect.arrayContaining(['karpenter']));
    for (const a of Object.values(dry.actuators ?? {})) expect(a.actuator).toBe('karpenter');
    const claimsBefore = karpenter.claims().length;
    expect(h.kube.mutatingRequests()).toEqual([]);

    const real = (await handler({ DRY_RUN: 'false' })(scheduledEvent, lambdaContext())) as ActingResponse;
    // The same decisions as the dry run, every one started.
    expect(real.decisions.map((d) => d.nodes)).toEqual(dry.decisions.map((d) => d.nodes));
    expect(real.actions.skipped).toEqual([]);
    expect(real.actions.commands.map((c) => c.nodes)).toEqual(real.decisions.map((d) => d.nodes));
    for (const c of real.actions.commands) {
      expect(c.step, `${c.nodes.join()}: ${JSON.stringify(c)}`).toBe('done');
    }

    // Replacements are NodeClaims of ours; no instance launched or terminated through EC2.
    const replaces = real.decisions.filter((d) => d.action === 'replace');
    const ours = karpenter.claims().filter((c) => ((c['metadata'] as { annotations?: Record<string, string> }).annotations ?? {})['eks-consolidator.io/command'] !== undefined);
    expect(ours.length).toBe(replaces.reduce((n, d) => n + d.replacements.length, 0));
    expect(ec2Mock.commandCalls(CreateFleetCommand)).toEqual([]);
    expect(ec2Mock.commandCalls(RunInstancesCommand)).toEqual([]);
    expect(ec2Mock.commandCalls(TerminateInstancesCommand)).toEqual([]);
    // Every disrupted node left through Karpenter: its NodeClaim and Node are gone.
    karpenter.reconcile();
    for (const node of real.decisions.flatMap((d) => d.nodes)) expect(h.kube.store.get('Node', node), node).toBeUndefined();
    expect(karpenter.claims().length).toBe(claimsBefore - real.decisions.flatMap((d) => d.nodes).length + ours.length);
    expect(karpenter.leakedClaims()).toEqual([]);
    // Pods moved only through the Eviction API.
    expect(h.kube.mutatingRequests().filter((r) => r.method === 'DELETE' && r.path.includes('/pods/'))).toEqual([]);
  }, 120_000);

  it('ACTUATOR=ec2 on the same cluster names EC2 for every pool', async () => {
    const dry = (await handler({ ACTUATOR: 'ec2' })({ dryRun: true }, lambdaContext())) as PassResponse;
    for (const a of Object.values(dry.actuators ?? {})) expect(a.actuator).toBe('ec2');
  });
});
