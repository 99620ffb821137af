// `--churn SPEC`: parsing (bad input names the flag), the daily curve, restarts.
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { createChurn, dailyFactor, NO_CHURN, parseChurn } from '../../src/core/replay/churn.ts';
import { seededRandom, type Random } from '../../src/core/replay/random.ts';
import { World } from '../../src/core/replay/world.ts';
import { cluster, Gi, m5Catalog, Mi, minutes, node, nodePool, on, pod, T0 } from '../builders.ts';

describe('parseChurn', () => {
  it.each([
    ['none', NO_CHURN],
    ['daily=0.5', { ...NO_CHURN, dailyAmplitude: 0.5 }],
    ['daily=0.6,jobs=4/h', { ...NO_CHURN, dailyAmplitude: 0.6, jobsPerHour: 4 }],
    ['jobs=2/h,jobLength=1h,jobCpu=1,jobMemory=2Gi', { ...NO_CHURN, jobsPerHour: 2, jobLengthMs: 3_600_000, jobCpuMillis: 1000, jobMemoryBytes: 2 * Gi }],
    ['restarts=6/h,peak=3', { ...NO_CHURN, restartsPerHour: 6, peakHourUtc: 3 }],
    ['restarts=60/h,after=3h', { ...NO_CHURN, restartsPerHour: 60, startAfterMs: 3 * 3_600_000 }],
  ])('reads %s', (text, expected) => {
    expect(parseChurn(text)).toEqual(expected);
  });

  it.each([
    ['daily=2', 'daily=2: expected a number from 0 to 1'],
    ['jobs=4', 'jobs=4: expected a rate such as 6/h'],
    ['storms=1', 'unknown churn model "storms"'],
    ['jobLength=soon', 'jobLength=soon: expected a positive duration'],
    ['jobCpu=lots', 'jobCpu=lots: expected a Kubernetes quantity'],
    ['daily', '"daily": expected NAME=VALUE'],
    ['after=later', 'after=later: expected a duration such as 3h'],
    ['after=-1h', 'after=-1h: expected a duration such as 3h'],
  ])('rejects %s', (text, message) => {
    expect(() => parseChurn(text)).toThrow(InputError);
    expect(() => parseChurn(text)).toThrow(message);
    expect(() => parseChurn(text)).toThrow('--churn');
  });
});

describe('dailyFactor', () => {
  const spec = { ...NO_CHURN, dailyAmplitude: 0.6, peakHourUtc: 14 };
  it.each([
    ['the peak hour', '2026-11-21T14:00:00Z', 1],
    ['twelve hours later', '2026-11-22T02:00:00Z', 0.4],
    ['six hours later', '2026-11-21T20:00:00Z', 0.7],
  ])('is right at %s', (_name, at, expected) => {
    expect(dailyFactor(spec, Date.parse(at))).toBeCloseTo(expected, 6);
  });
});

describe('restarts', () => {
  // Two restarts in the same minute: a large pod, then a small one. kube-scheduler places each new pod
  // within moments of its creation, so the large pod is back on the only node with room for it before
  // the small one is recreated; placing the minute's pods as one batch let the small one take that room
  // first (least-allocated sends it to the emptiest node) and left the large one Pending.
  it('places each restarted pod before the next restart, so a small pod does not take the room a large one left', () => {
    const a = node({ name: 'a', allocatable: { cpu: 3200, memory: 8 * Gi, pods: 58 } });
    const b = node({ name: 'b', allocatable: { cpu: 4000, memory: 8 * Gi, pods: 58 } });
    const large = pod({ name: 'x', requests: { cpu: 3000, memory: 128 * Mi } });
    const small = pod({ name: 's', requests: { cpu: 500, memory: 128 * Mi } });
    const other = pod({ name: 'y', requests: { cpu: 2900, memory: 128 * Mi } });
    const world = new World(cluster({ nodes: [a, b], pods: [...on('a', large), ...on('b', small, other)] }), T0, {
      nodePools: [nodePool()],
      catalog: m5Catalog(),
      scoring: 'least-allocated',
      launchDelayMs: minutes(2),
      random: seededRandom(1),
    });
    // Restarts 20 s and 40 s into the minute, each taking the first bound workload pod: x, then s.
    const waits = [20_000, 20_000];
    const random: Random = { next: () => 0, int: () => 0, exponential: () => waits.shift() ?? 1e12 };
    const churn = createChurn({ ...NO_CHURN, restartsPerHour: 60 }, world, random);

    world.advanceTo(T0 + minutes(1), minutes(1), churn.step);

    const now = world.snapshot();
    const placed = Object.fromEntries(now.pods.map((p) => [p.name.replace(/-x[0-9a-z]+$/, ''), p.nodeName]));
    expect(placed).toEqual({ x: 'a', s: 'b', y: 'b' });
    expect(now.pods.map((p) => p.name).filter((n) => n !== 'y')).toEqual([expect.stringMatching(/^x-x/), expect.stringMatching(/^s-x/)]);
    expect(world.pendingCount()).toBe(0);
    expect(world.counters.nodesLaunchedForPending).toBe(0);
  });
});

describe('after', () => {
  // One node with two workload pods, restarts at 60/h from the 30th minute: the pods are the same ones
  // until then, and restarted (recreated under new names) after.
  const world = () =>
    new World(cluster({ nodes: [node({ name: 'a' })], pods: on('a', pod({ name: 'p' }), pod({ name: 'q' })) }), T0, {
      nodePools: [nodePool()],
      catalog: m5Catalog(),
      scoring: 'least-allocated',
      launchDelayMs: minutes(2),
      random: seededRandom(1),
    });
  const names = (w: World) => w.snapshot().pods.map((p) => p.name).sort();

  it('leaves the workload still before the start, then changes it at the rate asked', () => {
    const w = world();
    // A restart every minute once the workload moves (a fixed wait stands in for the random one).
    const random: Random = { next: () => 0, int: () => 0, exponential: () => minutes(1) };
    const churn = createChurn({ ...NO_CHURN, restartsPerHour: 60, startAfterMs: minutes(30) }, w, random);
    w.advanceTo(T0 + minutes(30), minutes(1), churn.step);
    expect(names(w)).toEqual(['p', 'q']);
    w.advanceTo(T0 + minutes(35), minutes(1), churn.step);
    expect(names(w)).not.toEqual(['p', 'q']);
    expect(w.snapshot().pods).toHaveLength(2);
  });
});
