// The simulated cluster of a replay and what happens to it between passes: nodes launch and turn Ready
// after a delay, disrupted nodes are drained and terminated, controllers recreate evicted pods, the
// scheduler model binds pending pods, and the provisioner model launches nodes for pods that fit nowhere.
// Pure: the replay runner moves the clock (`advanceTo`) and carries the plan's decisions out (`carryOut`).
import { daemonSetPodsFor } from '../disruption/applyDecision.ts';
import { hasControllerOwner } from '../disruption/pods.ts';
import { indexCatalog, nodePricePerHour, type PriceIndex } from '../disruption/prices.ts';
import {
  DisruptedTaint,
  type Catalog,
  type CapacityType,
  type Cluster,
  type InstanceType,
  type Node,
  type NodePool,
  type Offering,
  type Pod,
} from '../model/types.ts';
import type { Decision } from '../plan.ts';
import { newNodeLabels } from '../scheduling/launchedLabels.ts';
import { createSimulator } from '../scheduling/simulator.ts';
import type { Random } from './random.ts';
import { isPending, schedulePending, type SchedulerScoring } from './scheduler.ts';

/** A node replaced again this soon after its launch counts as regret (docs/replay.md). */
export const REGRET_WINDOW_MS = 30 * 60_000;

/** Annotation carrying the pod a replayed pod stands for (its recorded or first name), across recreations. */
export const ORIGIN_ANNOTATION = 'replay.eks-consolidator.io/origin';

export interface WorldSettings {
  readonly nodePools: readonly NodePool[];
  readonly catalog: Catalog;
  readonly scoring: SchedulerScoring;
  /** From launch to Ready (EC2 boot + kubelet registration). */
  readonly launchDelayMs: number;
  readonly random: Random;
}

/** What the replay counts while the clock moves. */
export interface WorldCounters {
  /** Dollars spent: sum over nodes of price x time, from launch to termination. */
  dollars: number;
  /** Pending pods x minutes. */
  pendingPodMinutes: number;
  podsEvicted: number;
  nodesDisrupted: number;
  nodesReplaced: number;
  /** Disrupted nodes that a consolidation had launched as a replacement less than REGRET_WINDOW_MS before. */
  regret: number;
  nodesLaunchedForPending: number;
  replacementsLaunched: number;
}

interface Drain {
  /** Nodes to drain and terminate... */
  readonly nodes: readonly string[];
  /** ...once this replacement is Ready (undefined: at once). */
  readonly waitFor?: string;
}

export interface LaunchSpec {
  readonly instanceType: InstanceType;
  readonly offering: Offering;
  readonly nodePool: NodePool | undefined;
  readonly poolName: string;
}

export class World {
  private nodes: Node[];
  private pods: Pod[];
  private readonly rest: Omit<Cluster, 'nodes' | 'pods'>;
  private readonly prices: PriceIndex;
  private readonly pools: ReadonlyMap<string, NodePool>;
  /** Node name -> when it turns Ready (launching nodes only). */
  private readonly readyAt = new Map<string, number>();
  /** Node name -> launch time (nodes launched during the replay). */
  readonly launchedAt = new Map<string, number>();
  /** Replacements launched by a consolidation decision: name -> launch time (regret is counted on these). */
  readonly replacementLaunchedAt = new Map<string, number>();
  /** Pod uid -> the launching node it waits for (the provisioner's nomination). */
  private readonly nominated = new Map<string, string>();
  private drains: Drain[] = [];
  /** The pending pods and nodes of the last provisioning that launched nothing. */
  private unprovisionable: string | undefined;
  private seq = 0;
  readonly counters: WorldCounters = {
    dollars: 0,
    pendingPodMinutes: 0,
    podsEvicted: 0,
    nodesDisrupted: 0,
    nodesReplaced: 0,
    regret: 0,
    nodesLaunchedForPending: 0,
    replacementsLaunched: 0,
  };

  constructor(
    cluster: Cluster,
    private nowMs: number,
    private readonly settings: WorldSettings,
  ) {
    const { nodes, pods, ...rest } = cluster;
    this.nodes = [...nodes];
    this.pods = pods.map((p) => (p.annotations[ORIGIN_ANNOTATION] ? p : { ...p, annotations: { ...p.annotations, [ORIGIN_ANNOTATION]: `${p.namespace}/${p.name}` } }));
    this.rest = rest;
    this.prices = indexCatalog(settings.catalog);
    this.pools = new Map(settings.nodePools.map((p) => [p.name, p]));
  }

  get now(): number {
    return this.nowMs;
  }

  /** The cluster as `kubectl get` would show it now (workload readiness derived from pending pods). */
  snapshot(): Cluster {
    const pending = this.pods.filter(isPending);
    const workloads = this.rest.workloads.map((w) => {
      const short = pending.filter((p) => p.namespace === w.namespace && ownedBy(p, w.name)).length;
      return { ...w, readyReplicas: Math.max(0, Math.min(w.readyReplicas, w.desiredReplicas - short)) };
    });
    return { ...this.rest, workloads, nodes: [...this.nodes], pods: [...this.pods] };
  }

  /** Price per hour of everything running or launching now. */
  costPerHour(): number {
    return this.nodes.reduce((sum, n) => sum + (nodePricePerHour(n, this.prices) ?? 0), 0);
  }

  pendingCount(): number {
    return this.pods.filter(isPending).length;
  }

  nodeCount(): number {
    return this.nodes.length;
  }

  /** Pods the workload models may scale (controller-owned, not daemonset/mirror, not finished). */
  workloadPods(): readonly Pod[] {
    return this.pods.filter((p) => !p.isDaemonSetPod && !p.isMirrorPod && hasControllerOwner(p) && p.phase !== 'Succeeded' && p.phase !== 'Failed');
  }

  /** Adds pods (new arrivals, Pending) and tries to bind them. */
  addPods(pods: readonly Pod[]): void {
    this.pods.push(...pods.map((p) => ({ ...p, nodeName: undefined, phase: 'Pending' as const, startedAt: undefined, createdAt: this.nowMs })));
  }

  /** Removes pods (scale-down, job completion, recorded departures) by uid. */
  removePods(uids: ReadonlySet<string>): void {
    if (uids.size === 0) return;
    this.pods = this.pods.filter((p) => !uids.has(p.uid));
    for (const uid of uids) this.nominated.delete(uid);
  }

  /** A name for a new object of the replay, unique within it. */
  nextName(prefix: string): string {
    this.seq += 1;
    return `${prefix}-${this.seq.toString(36)}`;
  }

  /**
   * Moves the clock to `toMs` in steps of at most `stepMs`: costs and pending minutes accrue, `onStep`
   * (the churn model) changes the workload, launches turn Ready and the drains waiting for them run, and
   * after each step the scheduler binds and the provisioner launches for what is still pending. A churn
   * model that times its events within the step (restarts) brings the launches up to each event's time
   * first (`catchUp`), so that a replacement Ready before a restart is drained before it too.
   */
  advanceTo(toMs: number, stepMs: number, onStep?: (world: World, fromMs: number, toMs: number) => void): void {
    while (this.nowMs < toMs) {
      const next = Math.min(toMs, this.nowMs + stepMs);
      const hours = (next - this.nowMs) / 3_600_000;
      this.counters.dollars += this.costPerHour() * hours;
      this.counters.pendingPodMinutes += this.pendingCount() * hours * 60;
      const from = this.nowMs;
      this.nowMs = next;
      onStep?.(this, from, next);
      this.catchUp(next);
      this.settle();
    }
  }

  /** Binds pending pods and launches nodes for those that fit nowhere. */
  settle(): void {
    this.runDrains();
    this.bind();
    this.provision();
  }

  /**
   * Carries one pass's decisions out as the Lambda would: disrupted nodes are tainted at once; a
   * replacement is launched and the old nodes drained once it is Ready; a delete drains at once. Evicted
   * pods are recreated by their controllers (new pod, Pending) and bound by the scheduler model.
   */
  carryOut(decisions: readonly Decision[]): void {
    for (const decision of decisions) {
      this.counters.regret += this.regretOf(decision.nodes);
      this.counters.nodesDisrupted += decision.nodes.length;
      if (decision.action === 'replace') this.counters.nodesReplaced += decision.nodes.length;
      const names = new Set(decision.nodes);
      this.nodes = this.nodes.map((n) => (names.has(n.name) && !n.taints.some((t) => t.key === DisruptedTaint.key) ? { ...n, taints: [...n.taints, DisruptedTaint] } : n));
      let waitFor: string | undefined;
      for (const replacement of decision.replacements) {
        const spec = this.replacementSpec(replacement.instanceTypes, replacement.capacityType, replacement.zones, replacement.nodePool);
        if (!spec) continue;
        waitFor = this.launch(spec);
        this.replacementLaunchedAt.set(waitFor, this.nowMs);
        this.counters.replacementsLaunched += 1;
      }
      this.drains.push({ nodes: decision.nodes, ...(waitFor ? { waitFor } : {}) });
    }
    this.settle();
  }

  /**
   * How many of these nodes are replacements a consolidation launched less than REGRET_WINDOW_MS ago:
   * the decision undoes a recent one (the cascade Karpenter's savings-threshold design warns of). Nodes
   * launched for pending pods do not count: deleting those is the provisioner's churn, not
   * consolidation's.
   */
  regretOf(nodeNames: readonly string[]): number {
    return nodeNames.filter((name) => {
      const launched = this.replacementLaunchedAt.get(name);
      return launched !== undefined && this.nowMs - launched < REGRET_WINDOW_MS;
    }).length;
  }

  private replacementSpec(instanceTypes: readonly string[], capacityType: CapacityType, zones: readonly string[], poolName: string): LaunchSpec | undefined {
    for (const name of instanceTypes) {
      const type = this.prices.get(name);
      const offering = type?.offerings
        .filter((o) => o.available && o.capacityType === capacityType && (zones.length === 0 || zones.includes(o.zone)))
        .sort((a, b) => a.pricePerHour - b.pricePerHour || (a.zone < b.zone ? -1 : 1))[0];
      if (type && offering) return { instanceType: type, offering, nodePool: this.pools.get(poolName), poolName };
    }
    return undefined;
  }

  /** Launches a node (not Ready until the launch delay has passed); returns its name. */
  launch(spec: LaunchSpec): string {
    const name = this.nextName(`replay-${spec.instanceType.name.replace(/\./g, '-')}`);
    const labels = newNodeLabels({
      name,
      typeLabels: spec.instanceType.labels,
      instanceType: spec.instanceType.name,
      capacityType: spec.offering.capacityType,
      zone: spec.offering.zone,
      pool: spec.nodePool,
      poolName: spec.poolName,
    });
    const ready = this.settings.launchDelayMs <= 0;
    const node: Node = {
      name,
      uid: name,
      labels,
      annotations: {},
      createdAt: this.nowMs,
      taints: spec.nodePool?.templateTaints ?? [],
      unschedulable: false,
      zone: spec.offering.zone,
      instanceType: spec.instanceType.name,
      capacityType: spec.offering.capacityType,
      nodePool: spec.poolName,
      allocatable: spec.instanceType.allocatable,
      capacity: spec.instanceType.capacity,
      ready,
      ...(ready ? { readySince: this.nowMs } : {}),
      deleting: false,
    };
    this.nodes.push(node);
    this.launchedAt.set(name, this.nowMs);
    if (!ready) this.readyAt.set(name, this.nowMs + this.settings.launchDelayMs);
    this.pods.push(...daemonSetPodsFor(this.snapshotNodesOnly(), node).map((p) => ({ ...p, uid: `${name}/${p.uid}`, createdAt: this.nowMs, startedAt: this.nowMs })));
    return name;
  }

  private snapshotNodesOnly(): Cluster {
    return { ...this.rest, nodes: this.nodes, pods: [] };
  }

  /**
   * The launches Ready by `timeMs` turn Ready, and the drains waiting for them run at once, as the
   * actuator evicts as soon as a replacement is Ready: a pod restarted a moment later finds the
   * replacement already taking the drained pods, not an empty node to itself.
   */
  catchUp(timeMs: number): void {
    let turnedReady = false;
    for (const [name, at] of this.readyAt) {
      if (at > timeMs) continue;
      this.readyAt.delete(name);
      this.nodes = this.nodes.map((n) => (n.name === name ? { ...n, ready: true, readySince: at } : n));
      turnedReady = true;
    }
    if (!turnedReady) return;
    this.runDrains();
    this.bind();
  }

  private runDrains(): void {
    const waiting: Drain[] = [];
    for (const drain of this.drains) {
      if (drain.waitFor !== undefined && this.readyAt.has(drain.waitFor)) waiting.push(drain);
      else this.drain(drain.nodes);
    }
    this.drains = waiting;
  }

  /** Evicts the nodes' pods (controllers recreate them, Pending) and terminates the nodes. */
  private drain(nodeNames: readonly string[]): void {
    const names = new Set(nodeNames);
    const kept: Pod[] = [];
    const recreated: Pod[] = [];
    for (const pod of this.pods) {
      if (pod.nodeName === undefined || !names.has(pod.nodeName)) {
        kept.push(pod);
        continue;
      }
      if (pod.isDaemonSetPod || pod.isMirrorPod || pod.phase === 'Succeeded' || pod.phase === 'Failed') continue;
      this.counters.podsEvicted += 1;
      if (!hasControllerOwner(pod)) continue; // a bare pod is gone for good
      recreated.push(this.recreate(pod));
    }
    this.pods = [...kept, ...recreated];
    this.nodes = this.nodes.filter((n) => !names.has(n.name));
    for (const name of names) {
      this.readyAt.delete(name);
      for (const [uid, target] of this.nominated) if (target === name) this.nominated.delete(uid);
    }
  }

  /** The pod a controller creates in place of an evicted one: a new uid and name, Pending. */
  recreate(pod: Pod): Pod {
    const base = pod.name.replace(/-x[0-9a-z]+$/, '');
    const name = `${base}-x${(++this.seq).toString(36)}`;
    return {
      ...pod,
      uid: `${pod.uid.replace(/~.*$/, '')}~${this.seq.toString(36)}`,
      name,
      nodeName: undefined,
      phase: 'Pending',
      createdAt: this.nowMs,
      startedAt: undefined,
      terminating: false,
      deletingSince: undefined,
    };
  }

  /**
   * Binds what the scheduler model can of the pending pods now. kube-scheduler binds a new pod within
   * moments of its creation, so a workload change between two steps (a restart) calls this at once:
   * otherwise every pod created in the same minute would compete for the room as one batch.
   */
  bindNow(): void {
    this.bind();
  }

  private bind(): void {
    const bindings = schedulePending(this.nodes, this.pods, this.settings.scoring, this.settings.random);
    if (bindings.length === 0) return;
    const to = new Map(bindings.map((b) => [b.podUid, b.nodeName]));
    this.pods = this.pods.map((p) => {
      const nodeName = to.get(p.uid);
      if (nodeName === undefined) return p;
      this.nominated.delete(p.uid);
      return { ...p, nodeName, phase: 'Running', startedAt: this.nowMs };
    });
  }

  /**
   * Karpenter's provisioning, modelled: the pending pods not already waiting for a launching node are
   * packed by the same simulation the consolidation pass uses. Nodes launched and not Ready yet count as
   * capacity first (Karpenter's scheduler places pending pods on its in-flight NodeClaims before it
   * creates new ones), less the pods already waiting for them; a pod that fits on one waits for it. The
   * rest go onto as many new nodes as needed, each launched as the cheapest offering of its cheapest type.
   */
  private provision(): void {
    const waiting = this.pods.filter((p) => isPending(p) && !this.nominated.has(p.uid));
    if (waiting.length === 0) return;
    // Pods that fit on no new node stay pending: do not search again until they or the nodes change.
    const key = `${waiting.map((p) => p.uid).join(',')}|${this.nodes.map((n) => n.name).join(',')}`;
    if (key === this.unprovisionable) return;
    // The in-flight nodes as they will be once Ready, holding the pods that wait for them.
    const nodes = this.nodes.map((n) => (this.readyAt.has(n.name) ? { ...n, ready: true, readySince: this.nowMs } : n));
    const pods = this.pods.map((p) => {
      const target = this.nominated.get(p.uid);
      return target !== undefined && this.readyAt.has(target) && isPending(p) ? { ...p, nodeName: target, phase: 'Running' as const } : p;
    });
    const cluster: Cluster = { ...this.rest, nodes, pods };
    const simulator = createSimulator({ cluster, nodePools: this.settings.nodePools, catalog: this.settings.catalog });
    // Only in-flight and new nodes: the scheduler model has already said no Ready node takes these pods.
    const excluded = new Set(this.nodes.filter((n) => !this.readyAt.has(n.name)).map((n) => n.name));
    const result = simulator.simulate({ excludedNodes: excluded, pods: waiting, maxNewNodes: waiting.length });
    let nominatedInFlight = 0;
    for (const { pod, nodeName } of result.placements) {
      if (!this.readyAt.has(nodeName)) continue;
      this.nominated.set(pod.uid, nodeName);
      nominatedInFlight += 1;
    }
    for (const plan of result.newNodes) {
      const option = plan.options[0];
      const offering = option?.offerings[0];
      if (!option || !offering) continue;
      const name = this.launch({ instanceType: option.instanceType, offering, nodePool: this.pools.get(plan.nodePool), poolName: plan.nodePool });
      this.counters.nodesLaunchedForPending += 1;
      for (const pod of plan.pods) this.nominated.set(pod.uid, name);
    }
    this.unprovisionable = result.newNodes.length === 0 && nominatedInFlight === 0 ? key : undefined;
    if (this.settings.launchDelayMs <= 0) this.bind();
  }
}

/** Whether a pod belongs to the workload `name` (directly, or through a ReplicaSet named `name-<hash>`). */
export function ownedBy(pod: Pod, name: string): boolean {
  return pod.ownerReferences.some((o) => o.controller && (o.name === name || (o.kind === 'ReplicaSet' && o.name.startsWith(`${name}-`))));
}
