// Fault injection at every step boundary of the actuator (docs/safety.md, "Fault injection").
//
// A clean run of each scenario records the sequence of its mutating steps (taint, launch, evict,
// terminate, delete, untaint, and every write of the command). Then, for each step k of that sequence
// and each kind of fault, a fresh world runs the same scenario pass after pass with the fault injected
// once, at step k:
//   crash-before  the Lambda dies just before step k (the call never reaches the API);
//   crash-after   the call is made, then the Lambda dies before it learns the answer (e.g. CreateFleet
//                 returned but its instance id was never stored; the Node deleted but `done` not written);
//   timeout       after step k the invocation runs out of time (the executor's own deadline margin).
// Later passes run without faults until every command has ended. Then, whatever the boundary:
//   0 pods evicted outside the Eviction API (deleted directly, or left bound to a deleted Node),
//   0 instances terminated while a workload pod was bound to their node,
//   0 instances we launched that are neither terminated nor joined as a Node,
//   0 taints or cordons of ours left on a node.
// The scenarios and the machinery; faultInjection.ec2.test.ts and faultInjection.karpenter.test.ts run
// them per actuator (two files, so the suite's two workers share the work).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actOnPass, resumeCommands } from '../../src/app/act/executeCommands.ts';
import type { ActDeps } from '../../src/app/act/executeCommands.ts';
import type { Decision } from '../../src/core/plan.ts';
import type { InstanceLauncher, NodeClaimApi, NodeOperations } from '../../src/core/ports/actuator.ts';
import { COMMAND_ANNOTATION } from '../../src/core/ports/actuator.ts';
import type { StateStore } from '../../src/core/state/ports.ts';
import { FINAL_COMMAND_STEPS } from '../../src/core/state/types.ts';
import { kubeDaemonSet, kubeNode, kubePod } from '../support/fakeKubeApi.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { FAST, KARPENTER_NODE_LABELS, deleteDecision, karpenterPassResult, passResult, replaceDecision, startWorld, type World, type WorldOptions } from './harness.ts';

const OLD = 'ip-10-1-1-7.ec2.internal';
const OLD2 = 'ip-10-2-1-8.ec2.internal';
const NEW = 'ip-10-9-9-9.ec2.internal';
const MINUTE = 60_000;
const MAX_PASSES = 12;

type Mode = 'crash-before' | 'crash-after' | 'timeout';

export interface Scenario {
  readonly name: string;
  readonly objects: () => unknown[];
  readonly decision: Decision;
  /** Act through Karpenter's NodeClaims, with its stand-in running these settings; absent: through EC2. */
  readonly karpenter?: WorldOptions['karpenter'];
  /** What the launched instance does: registers Ready, registers NotReady with a pod bound, or nothing. */
  readonly onLaunch: (w: World, instanceId: string) => void;
}

const ONE = replaceDecision([OLD]).replacements[0]!;

function busyNode(name: string, prefix: string, karpenter = false): unknown[] {
  return [
    kubeNode(name, karpenter ? { labels: KARPENTER_NODE_LABELS } : {}),
    kubePod('default', `${prefix}-1`, { node: name }),
    kubePod('default', `${prefix}-2`, { node: name }),
    kubePod('kube-system', `aws-node-${prefix}`, { node: name, owner: { kind: 'DaemonSet', name: 'aws-node' } }),
  ];
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'emptiness delete',
    objects: () => [kubeNode(OLD), kubePod('kube-system', 'aws-node-x', { node: OLD, owner: { kind: 'DaemonSet', name: 'aws-node' } })],
    decision: deleteDecision([OLD]),
    onLaunch: () => {},
  },
  {
    name: 'single-node delete',
    objects: () => busyNode(OLD, 'web'),
    decision: deleteDecision([OLD], 'single-node'),
    onLaunch: () => {},
  },
  {
    name: 'single-node replace',
    objects: () => busyNode(OLD, 'web'),
    decision: replaceDecision([OLD]),
    onLaunch: (w, id) => w.registerNode(id, NEW, true),
  },
  {
    name: 'multi-node replace',
    objects: () => [...busyNode(OLD, 'web'), ...busyNode(OLD2, 'api')],
    decision: replaceDecision([OLD, OLD2]),
    onLaunch: (w, id) => w.registerNode(id, NEW, true),
  },
  {
    // Passes are 5 minutes apart, and each polls for 90 s: the NodeClaim is seen launching, then
    // launched, then registered and initialized.
    name: 'karpenter: single-node replace through a NodeClaim',
    objects: () => busyNode(OLD, 'web', true),
    decision: replaceDecision([OLD]),
    karpenter: { launchDelayMs: MINUTE, registerDelayMs: 3 * MINUTE, initializeDelayMs: 4 * MINUTE },
    onLaunch: () => {},
  },
  {
    name: 'karpenter: m-to-n repack through two NodeClaims',
    objects: () => [...busyNode(OLD, 'web', true), ...busyNode(OLD2, 'api', true)],
    decision: replaceDecision([OLD, OLD2], { replacements: [ONE, ONE], move: 'm-to-n' }),
    karpenter: { registerDelayMs: 2 * MINUTE },
    onLaunch: () => {},
  },
  {
    name: 'karpenter: single-node delete through the NodeClaim',
    objects: () => busyNode(OLD, 'web', true),
    decision: deleteDecision([OLD], 'single-node'),
    karpenter: {},
    onLaunch: () => {},
  },
  {
    name: 'karpenter: replace rolled back (the NodeClaim never registers)',
    objects: () => busyNode(OLD, 'web', true),
    decision: replaceDecision([OLD]),
    karpenter: { neverRegister: () => true, registrationTimeoutMs: 12 * MINUTE },
    onLaunch: () => {},
  },
  {
    name: 'replace rolled back (replacement never Ready, a pod bound to it)',
    objects: () => busyNode(OLD, 'web'),
    decision: replaceDecision([OLD]),
    onLaunch: (w, id) => {
      w.registerNode(id, NEW, false);
      w.api.store.put(kubePod('default', 'tolerant-agent', { node: NEW }));
    },
  },
];

class Crash extends Error {
  override readonly name = 'Crash';
}

/** Counts mutating steps across all passes of a run and injects one fault at step `at`. */
class Faults {
  readonly names: string[] = [];
  private count = 0;
  dead = false;
  outOfTime = false;

  constructor(
    private readonly at: number | undefined,
    private readonly mode: Mode,
  ) {}

  /** A new invocation: alive again, with time. */
  newInvocation(): void {
    this.dead = false;
    this.outOfTime = false;
  }

  async step<T>(name: string, call: () => Promise<T>): Promise<T> {
    if (this.dead) throw new Crash(`the invocation died before ${name}`);
    this.count += 1;
    this.names.push(name);
    const here = this.count === this.at;
    if (here && this.mode === 'crash-before') {
      this.dead = true;
      throw new Crash(`crash before ${name}`);
    }
    const result = await call();
    if (here && this.mode === 'crash-after') {
      this.dead = true;
      throw new Crash(`crash after ${name}`);
    }
    if (here && this.mode === 'timeout') this.outOfTime = true;
    return result;
  }
}

function faultyDeps(base: ActDeps, faults: Faults): ActDeps {
  const n = base.nodes;
  const nodes: NodeOperations = {
    taintAndCordon: (name, taint, o) => faults.step(`taint ${short(name)}`, () => n.taintAndCordon(name, taint, o)),
    untaintAndUncordon: (name, key, o) => faults.step(`untaint ${short(name)}`, () => n.untaintAndUncordon(name, key, o)),
    getNode: (name) => n.getNode(name),
    findNodeByInstanceId: (id) => n.findNodeByInstanceId(id),
    listNodes: () => n.listNodes(),
    listPodsOnNode: (name) => n.listPodsOnNode(name),
    evictPod: (ns, name, o) => faults.step(`evict ${name}`, () => n.evictPod(ns, name, o)),
    deleteNode: (name, o) => faults.step(`delete Node ${short(name)}`, () => n.deleteNode(name, o)),
    createEvent: (e) => n.createEvent(e),
  };
  const i = base.instances;
  const instances: InstanceLauncher = {
    launch: (r) => faults.step('CreateFleet', () => i.launch(r)),
    findByCommand: (id) => i.findByCommand(id),
    terminate: (id, o) => faults.step(`terminate ${o.requireOurTag ? 'replacement' : 'old instance'}`, () => i.terminate(id, o)),
    describe: (id) => i.describe(id),
    listOurs: () => i.listOurs(),
  };
  const c = base.nodeClaims;
  const nodeClaims: NodeClaimApi | undefined =
    c === undefined
      ? undefined
      : {
          create: (r) => faults.step(`create NodeClaim #${r.index}`, () => c.create(r)),
          get: (name) => c.get(name),
          findForNode: (node) => c.findForNode(node),
          delete: (name, o) => faults.step(`delete NodeClaim ${name.startsWith('default-ip') ? 'old' : 'replacement'}`, () => c.delete(name, o)),
          listOurs: () => c.listOurs(),
        };
  const s = base.store;
  const store: StateStore = {
    load: (t) => s.load(t),
    save: (a, b, t) => s.save(a, b, t),
    acquireLease: (o, t, ttl) => s.acquireLease(o, t, ttl),
    renewLease: (o, t, ttl) => s.renewLease(o, t, ttl),
    releaseLease: (o) => s.releaseLease(o),
    readLease: () => s.readLease(),
    listCommands: (t) => s.listCommands(t),
    putCommand: (cmd, v) => faults.step(`store command (${cmd.step})`, () => s.putCommand(cmd, v)),
  };
  return { ...base, nodes, instances, ...(nodeClaims === undefined ? {} : { nodeClaims }), store, remainingMs: () => (faults.outOfTime ? 0 : base.remainingMs()) };
}

function short(name: string): string {
  return name === OLD ? 'old' : name === OLD2 ? 'old2' : name === NEW ? 'new' : name;
}

interface Outcome {
  readonly boundary: string;
  readonly names: readonly string[];
  readonly unfinished: number;
  readonly podsLost: string[];
  readonly terminatedWithPods: number;
  readonly leakedInstances: string[];
  readonly strandedTaints: string[];
}

/** Runs the scenario pass after pass with one fault at step `at` (none: a clean run). */
async function run(db: LocalDynamo, scenario: Scenario, at: number | undefined, mode: Mode): Promise<Outcome> {
  const w = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), ...scenario.objects()], scenario.karpenter === undefined ? {} : { karpenter: scenario.karpenter });
  try {
    w.ec2.onLaunch = (id) => scenario.onLaunch(w, id);
    const faults = new Faults(at, mode);
    for (let pass = 0; pass < MAX_PASSES; pass += 1) {
      faults.newInvocation();
      const deps = faultyDeps(w.deps(2 * MINUTE), faults);
      const result = scenario.karpenter === undefined ? passResult([scenario.decision]) : karpenterPassResult([scenario.decision]);
      await (pass === 0 ? actOnPass(result, deps, FAST) : resumeCommands(deps, FAST));
      w.clock.nowMs += 5 * MINUTE;
      const commands = await w.commands();
      if (pass > 0 && commands.every((c) => FINAL_COMMAND_STEPS.has(c.step))) break;
    }
    return { boundary: at === undefined ? 'none' : `${mode} ${faults.names[at - 1] ?? '?'} (#${at})`, names: faults.names, ...(await inspect(w)) };
  } finally {
    await w.close();
  }
}

async function inspect(w: World): Promise<Omit<Outcome, 'boundary' | 'names'>> {
  const commands = await w.commands();
  const nodes = new Set(w.api.store.list('Node').map((n) => String((n['metadata'] as Record<string, unknown>)['name'])));
  // Pods are only ever removed by the Eviction API here: a DELETE on a pod, or a workload pod left bound
  // to a Node that no longer exists (the pod garbage collector would force-delete it), is a lost pod.
  const directDeletes = w.api.requests.filter((r) => r.method === 'DELETE' && r.path.includes('/pods/')).map((r) => r.path);
  const orphaned = w.api.store
    .list('Pod')
    .filter((p) => {
      const owners = (((p['metadata'] as Record<string, unknown>)['ownerReferences'] ?? []) as { kind: string }[]).map((o) => o.kind);
      const bound = String((p['spec'] as Record<string, unknown>)['nodeName'] ?? '');
      return !owners.includes('DaemonSet') && bound !== '' && !nodes.has(bound);
    })
    .map((p) => String((p['metadata'] as Record<string, unknown>)['name']));
  const registered = new Set(
    w.api.store.list('Node').map((n) => {
      const id = String((n['spec'] as Record<string, unknown>)['providerID'] ?? '');
      return id.slice(id.lastIndexOf('/') + 1);
    }),
  );
  w.karpenter?.reconcile();
  const terminatedByKarpenter = new Set(w.karpenter?.terminatedInstances ?? []);
  const leaked = [
    ...w.ec2
      .launched()
      .filter((i) => i.state !== 'shutting-down' && i.state !== 'terminated' && !registered.has(i.id))
      .map((i) => i.id),
    // Karpenter's: an instance neither terminated nor joined, or a NodeClaim of ours with no Node that is not being deleted.
    ...(w.karpenter?.launchedInstances ?? []).filter((id) => !terminatedByKarpenter.has(id) && !registered.has(id)),
    ...(w.karpenter?.leakedClaims() ?? []).map((claim) => `NodeClaim ${String((claim['metadata'] as Record<string, unknown>)['name'])}`),
  ];
  const stranded = w.api.store
    .list('Node')
    .filter((n) => {
      const spec = (n['spec'] ?? {}) as { taints?: { key: string }[]; unschedulable?: boolean };
      const annotations = ((n['metadata'] as Record<string, unknown>)['annotations'] ?? {}) as Record<string, string>;
      return spec.unschedulable === true || (spec.taints ?? []).some((t) => t.key === 'karpenter.sh/disrupted' || t.key === 'eks-consolidator.io/disrupting') || COMMAND_ANNOTATION in annotations;
    })
    .map((n) => String((n['metadata'] as Record<string, unknown>)['name']));
  return {
    unfinished: commands.filter((c) => !FINAL_COMMAND_STEPS.has(c.step)).length,
    podsLost: [...directDeletes, ...orphaned],
    terminatedWithPods: w.terminatedWithPods.length,
    leakedInstances: leaked,
    strandedTaints: stranded,
  };
}

/** Registers one test per scenario: a clean run, then a fault at every step boundary. */
export function describeFaultInjection(scenarios: readonly Scenario[]): void {
  let db: LocalDynamo;
  beforeAll(async () => {
    db = await startDynalite();
  });
  afterAll(async () => {
    await db.stop();
  });

  const bad = (o: Outcome) =>
    o.unfinished > 0 || o.podsLost.length > 0 || o.terminatedWithPods > 0 || o.leakedInstances.length > 0 || o.strandedTaints.length > 0;

  describe.each(scenarios)('fault injection: $name', (scenario) => {
    it('a crash or a timeout at every step boundary ends with nothing lost, leaked or stranded', async () => {
      const clean = await run(db, scenario, undefined, 'crash-before');
      expect(bad(clean), JSON.stringify(clean)).toBe(false);
      expect(clean.names.length).toBeGreaterThan(2);

      const table: Outcome[] = [];
      // A crash before and after every step; a timeout (the executor stopping on its own deadline after
      // the step, which records its progress, a gentler end than the crash after the same step) after
      // every other step, so that the suite stays under 6 minutes; FAULT_EVERY_TIMEOUT=1 tries them all.
      const everyTimeout = process.env['FAULT_EVERY_TIMEOUT'] === '1';
      for (let at = 1; at <= clean.names.length; at += 1) {
        for (const mode of ['crash-before', 'crash-after', 'timeout'] as const) {
          if (mode === 'timeout' && !everyTimeout && at % 2 === 0 && at !== clean.names.length) continue;
          table.push(await run(db, scenario, at, mode));
        }
      }
      // The table names each boundary; every row must be clean.
      const rows = table.map((o) => ({
        boundary: o.boundary,
        lostPods: o.podsLost.length,
        terminatedWithPods: o.terminatedWithPods,
        leakedInstances: o.leakedInstances.length,
        strandedTaints: o.strandedTaints.length,
        unfinished: o.unfinished,
      }));
      if (process.env['SHOW_FAULT_TABLE']) console.table(rows);
      expect(rows.filter((r) => r.lostPods + r.terminatedWithPods + r.leakedInstances + r.strandedTaints + r.unfinished > 0)).toEqual([]);
      const timeouts = everyTimeout ? clean.names.length : Math.ceil(clean.names.length / 2) + (clean.names.length % 2 === 0 ? 1 : 0);
      expect(rows).toHaveLength(clean.names.length * 2 + timeouts);
      // The boundaries the issue names are among those tried.
      if (scenario.decision.action === 'replace' && !scenario.name.includes('rolled back')) {
        const launch = scenario.karpenter === undefined ? 'CreateFleet' : 'create NodeClaim #0';
        expect(rows.map((r) => r.boundary)).toContain(`crash-after ${launch} (#${clean.names.indexOf(launch) + 1})`);
      }
      if (scenario.karpenter !== undefined && !scenario.name.includes('rolled back')) {
        expect(clean.names).toContain('delete NodeClaim old');
      }
      if (scenario.karpenter === undefined && !scenario.name.includes('rolled back')) {
        // After the last old Node is deleted, the next step is recording the command.
        const deleteAt = clean.names.map((n) => n.startsWith('delete Node old')).lastIndexOf(true);
        expect(deleteAt).toBeGreaterThanOrEqual(0);
        expect(clean.names[deleteAt + 1]).toMatch(/^store command \((terminated|done)\)/);
      }
    }, 120_000);
  });
}
