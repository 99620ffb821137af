// A directory of timestamped `kubectl get -o json` dumps as the replay's workload: the pods that appear
// between two dumps arrive (at their creation time when it falls between the dumps, else at the later
// dump), the pods that disappear (or have finished) leave at the later dump. The first dump is the
// starting cluster. Nodes in the later dumps are not used: what nodes exist is what the replay decides.
import { InputError } from '../errors.ts';
import type { Cluster, Pod } from '../model/types.ts';
import type { ChurnModel } from './churn.ts';
import { ORIGIN_ANNOTATION, type World } from './world.ts';

export interface Dump {
  readonly file: string;
  readonly atMs: number;
  readonly cluster: Cluster;
}

export interface RecordedEvent {
  readonly atMs: number;
  readonly kind: 'arrive' | 'leave';
  /** `namespace/name` of the recorded pod. */
  readonly key: string;
  /** The pod, for arrivals. */
  readonly pod?: Pod;
}

const keyOf = (pod: Pod): string => `${pod.namespace}/${pod.name}`;
const workloadPod = (pod: Pod): boolean => !pod.isDaemonSetPod && !pod.isMirrorPod;
const live = (pod: Pod): boolean => workloadPod(pod) && pod.phase !== 'Succeeded' && pod.phase !== 'Failed';

/**
 * The time a dump's file name gives: `2026-11-21T12:00:00Z`, `2026-11-21T12-00-00Z` or `20261121T120000Z`
 * anywhere in the name (UTC when no zone is given). Undefined when the name has none.
 */
export function timeFromFileName(name: string): number | undefined {
  const match = /(\d{4})-?(\d{2})-?(\d{2})T(\d{2})[:-]?(\d{2})[:-]?(\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?/.exec(name);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction = '', zone = 'Z'] = match;
  const normalisedZone = zone === 'Z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const ms = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${fraction}${normalisedZone}`);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Dumps in time order; two dumps at the same time are refused (which one is later?). */
export function orderDumps(dumps: readonly Dump[]): Dump[] {
  const sorted = [...dumps].sort((a, b) => a.atMs - b.atMs);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.atMs === sorted[i - 1]!.atMs) throw new InputError('', '', `two dumps have the same time (${sorted[i - 1]!.file} and ${sorted[i]!.file})`).inFile(sorted[i]!.file);
  }
  return sorted;
}

/** Arrivals and departures between consecutive dumps, in time order. */
export function recordedEvents(dumps: readonly Dump[]): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  for (let i = 1; i < dumps.length; i++) {
    const before = dumps[i - 1]!;
    const after = dumps[i]!;
    const had = new Set(before.cluster.pods.filter(live).map(keyOf));
    const has = new Map(after.cluster.pods.filter(live).map((p) => [keyOf(p), p] as const));
    for (const key of had) if (!has.has(key)) events.push({ atMs: after.atMs, kind: 'leave', key });
    for (const [key, pod] of has) {
      if (had.has(key)) continue;
      const created = pod.createdAt;
      const atMs = created !== undefined && created > before.atMs && created <= after.atMs ? created : after.atMs;
      events.push({ atMs, kind: 'arrive', key, pod });
    }
  }
  // Departures first at equal times: a pod replaced under the same name leaves before it comes back.
  return events.sort((a, b) => a.atMs - b.atMs || (a.kind === b.kind ? (a.key < b.key ? -1 : 1) : a.kind === 'leave' ? -1 : 1));
}

/** The recording as the replay's workload model. */
export function recordingChurn(events: readonly RecordedEvent[]): (world: World) => ChurnModel {
  return () => {
    let next = 0;
    return {
      step(world, _fromMs, toMs) {
        const leaving = new Set<string>();
        const arriving: Pod[] = [];
        while (next < events.length && events[next]!.atMs <= toMs) {
          const event = events[next++]!;
          if (event.kind === 'leave') leaving.add(event.key);
          else arriving.push({ ...event.pod!, annotations: { ...event.pod!.annotations, [ORIGIN_ANNOTATION]: event.key } });
        }
        if (leaving.size > 0) world.removePods(new Set(world.snapshot().pods.filter((p) => leaving.has(p.annotations[ORIGIN_ANNOTATION] ?? '')).map((p) => p.uid)));
        if (arriving.length > 0) world.addPods(arriving);
      },
    };
  };
}
