// Workload change between passes (`--churn SPEC`), so the churn loops that Karpenter's
// consolidationGracePeriod and savings-threshold designs describe can be reproduced: deployments
// following a daily curve, jobs arriving and finishing, pods restarted.
//
// SPEC is a comma-separated list (`none` for no change):
//   daily=A        every controller-owned workload scales between its size at the replay's start (at the
//                  peak hour) and (1 - A) of it twelve hours later, on a cosine; 0 <= A <= 1
//   peak=H         the hour of day (UTC, 0-23) of the daily peak (default 14)
//   jobs=N/h       job pods arrive at random (Poisson) at N per hour...
//   jobLength=D    ...and run for D once started (Go duration, default 30m)
//   jobCpu=Q, jobMemory=Q   their requests (Kubernetes quantities, default 500m and 1Gi)
//   restarts=N/h   that many random workload pods per hour are deleted and recreated (rollouts, crashes)
//   after=D        nothing changes for the first D of the replay (Go duration, default 0): the passes
//                  settle the cluster first, so what follows measures the churn alone
import { InputError } from '../errors.ts';
import { goDurationOrNull } from '../input/duration.ts';
import type { Pod } from '../model/types.ts';
import { baseUnits, cpuMillis, parseQuantity, type Quantity } from '../quantity.ts';
import type { Random } from './random.ts';
import { isPending } from './scheduler.ts';
import type { World } from './world.ts';

export interface ChurnSpec {
  readonly dailyAmplitude: number;
  readonly peakHourUtc: number;
  readonly jobsPerHour: number;
  readonly jobLengthMs: number;
  readonly jobCpuMillis: number;
  readonly jobMemoryBytes: number;
  readonly restartsPerHour: number;
  /** The workload is still for this long from the replay's start; the changes begin after it. */
  readonly startAfterMs: number;
}

export const NO_CHURN: ChurnSpec = {
  dailyAmplitude: 0,
  peakHourUtc: 14,
  jobsPerHour: 0,
  jobLengthMs: 30 * 60_000,
  jobCpuMillis: 500,
  jobMemoryBytes: 1024 ** 3,
  restartsPerHour: 0,
  startAfterMs: 0,
};

const fail = (problem: string): never => {
  throw new InputError('', '--churn', problem);
};

function number(key: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < min || value > max) fail(`${key}=${text}: expected a number from ${min} to ${max}`);
  return value;
}

function rate(key: string, text: string): number {
  const match = /^([0-9.]+)\/h$/.exec(text);
  if (!match) return fail(`${key}=${text}: expected a rate such as 6/h`);
  return number(key, match[1]!, 0, 100_000);
}

export function parseChurn(spec: string | undefined): ChurnSpec {
  if (spec === undefined || spec.trim() === '' || spec.trim() === 'none') return NO_CHURN;
  const out: { -readonly [K in keyof ChurnSpec]: ChurnSpec[K] } = { ...NO_CHURN };
  for (const part of spec.split(',')) {
    const [key, value, ...extra] = part.trim().split('=');
    if (value === undefined || extra.length > 0) fail(`"${part.trim()}": expected NAME=VALUE (daily, peak, jobs, jobLength, jobCpu, jobMemory, restarts, after)`);
    switch (key) {
      case 'daily':
        out.dailyAmplitude = number(key, value!, 0, 1);
        break;
      case 'peak':
        out.peakHourUtc = number(key, value!, 0, 23);
        break;
      case 'jobs':
        out.jobsPerHour = rate(key, value!);
        break;
      case 'restarts':
        out.restartsPerHour = rate(key, value!);
        break;
      case 'after': {
        const ms = goDurationOrNull(value!);
        if (ms === null || ms < 0) fail(`after=${value}: expected a duration such as 3h`);
        out.startAfterMs = ms!;
        break;
      }
      case 'jobLength': {
        const ms = goDurationOrNull(value!);
        if (ms === null || ms <= 0) fail(`jobLength=${value}: expected a positive duration such as 30m`);
        out.jobLengthMs = ms!;
        break;
      }
      case 'jobCpu':
      case 'jobMemory': {
        let amount: Quantity;
        try {
          amount = parseQuantity(value!);
        } catch {
          return fail(`${key}=${value}: expected a Kubernetes quantity`);
        }
        const units = key === 'jobCpu' ? cpuMillis(amount) : baseUnits(amount);
        if (!(units > 0)) fail(`${key}=${value}: must be positive`);
        if (key === 'jobCpu') out.jobCpuMillis = units;
        else out.jobMemoryBytes = units;
        break;
      }
      default:
        fail(`unknown churn model "${key}" (daily, peak, jobs, jobLength, jobCpu, jobMemory, restarts, after)`);
    }
  }
  return out;
}

/** Workload key: namespace and controller owner. */
function groupOf(pod: Pod): string | undefined {
  const owner = pod.ownerReferences.find((o) => o.controller);
  if (!owner || owner.kind === 'Job' || owner.kind === 'DaemonSet') return undefined;
  return `${pod.namespace}/${owner.kind}/${owner.name}`;
}

/** Daily scaling factor at a time: 1 at the peak hour, 1 - A twelve hours away. */
export function dailyFactor(spec: ChurnSpec, atMs: number): number {
  const hour = (atMs / 3_600_000) % 24;
  return 1 - (spec.dailyAmplitude * (1 - Math.cos((2 * Math.PI * (hour - spec.peakHourUtc)) / 24))) / 2;
}

export interface ChurnModel {
  /** Applies the changes due in (fromMs, toMs]. */
  step(world: World, fromMs: number, toMs: number): void;
}

export function createChurn(spec: ChurnSpec, world: World, random: Random): ChurnModel {
  // Each workload's size at the start (the daily curve scales it) and one pod of it as a template.
  const base = new Map<string, { count: number; template: Pod }>();
  for (const pod of world.workloadPods()) {
    const key = groupOf(pod);
    if (!key) continue;
    const entry = base.get(key);
    if (entry) entry.count += 1;
    else base.set(key, { count: 1, template: pod });
  }
  // Every change is timed from the moment the workload starts to move (`after`).
  const startMs = world.now + spec.startAfterMs;
  const startFactor = dailyFactor(spec, startMs);
  let nextJobAt = spec.jobsPerHour > 0 ? startMs + random.exponential(3_600_000 / spec.jobsPerHour) : Number.POSITIVE_INFINITY;
  let nextRestartAt = spec.restartsPerHour > 0 ? startMs + random.exponential(3_600_000 / spec.restartsPerHour) : Number.POSITIVE_INFINITY;

  return {
    step(w, _fromMs, toMs) {
      if (toMs <= startMs) return;
      // Jobs that have run their length finish.
      const finished = new Set(
        w.workloadPods()
          .filter((p) => p.ownerReferences.some((o) => o.kind === 'Job' && o.name.startsWith('replay-job')) && p.startedAt !== undefined && p.nodeName !== undefined && toMs - p.startedAt >= spec.jobLengthMs)
          .map((p) => p.uid),
      );
      w.removePods(finished);

      if (spec.dailyAmplitude > 0) {
        const factor = dailyFactor(spec, toMs) / startFactor;
        const current = new Map<string, Pod[]>();
        for (const pod of w.workloadPods()) {
          const key = groupOf(pod);
          if (key && base.has(key)) current.set(key, [...(current.get(key) ?? []), pod]);
        }
        const added: Pod[] = [];
        const removed = new Set<string>();
        for (const [key, { count, template }] of base) {
          const want = Math.max(1, Math.round(count * factor));
          const have = current.get(key) ?? [];
          for (let i = have.length; i < want; i++) added.push(w.recreate(template));
          if (have.length > want) {
            // A ReplicaSet scales down unbound pods first, then the newest.
            const order = [...have].sort((a, b) => Number(isPending(b)) - Number(isPending(a)) || (b.createdAt ?? 0) - (a.createdAt ?? 0));
            for (const pod of order.slice(0, have.length - want)) removed.add(pod.uid);
          }
        }
        w.removePods(removed);
        w.addPods(added);
      }

      while (nextJobAt <= toMs) {
        const name = w.nextName('replay-job');
        w.addPods([jobPod(name, spec)]);
        nextJobAt += random.exponential(3_600_000 / spec.jobsPerHour);
      }

      while (nextRestartAt <= toMs) {
        // Launches Ready before this restart, and their drains, come first.
        w.catchUp(nextRestartAt);
        const bound = w.workloadPods().filter((p) => p.nodeName !== undefined && groupOf(p) !== undefined);
        if (bound.length > 0) {
          const victim = bound[random.int(bound.length)]!;
          w.removePods(new Set([victim.uid]));
          w.addPods([w.recreate(victim)]);
          // The scheduler places the new pod before the next restart comes (not as one batch per step).
          w.bindNow();
        }
        nextRestartAt += random.exponential(3_600_000 / spec.restartsPerHour);
      }
    },
  };
}

function jobPod(name: string, spec: ChurnSpec): Pod {
  return {
    uid: name,
    namespace: 'replay-jobs',
    name,
    labels: { app: 'replay-job' },
    annotations: {},
    ownerReferences: [{ kind: 'Job', name, controller: true }],
    phase: 'Pending',
    priority: 0,
    terminating: false,
    isDaemonSetPod: false,
    isMirrorPod: false,
    requests: { cpu: spec.jobCpuMillis, memory: spec.jobMemoryBytes },
    nodeSelector: {},
    requiredNodeAffinity: [],
    tolerations: [],
    podAffinity: [],
    podAntiAffinity: [],
    topologySpread: [],
    hostPorts: [],
  };
}
