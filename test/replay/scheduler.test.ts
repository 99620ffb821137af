// The kube-scheduler model of the replay: filters, then NodeResourcesFit scoring.
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/core/replay/random.ts';
import { schedulePending, type SchedulerScoring } from '../../src/core/replay/scheduler.ts';
import { Gi, Mi, node, on, pod } from '../builders.ts';

const pendingPod = (overrides: Parameters<typeof pod>[0] = {}) => pod({ name: 'new', phase: 'Pending', nodeName: undefined, requests: { cpu: 200, memory: 256 * Mi }, ...overrides });

describe('schedulePending', () => {
  // "busy" already runs 1500m of its 1930m; "idle" runs nothing.
  const busy = node({ name: 'busy' });
  const idle = node({ name: 'idle' });
  const running = on('busy', pod({ requests: { cpu: 1500, memory: 2 * Gi } }));

  it.each<[SchedulerScoring, string]>([
    ['least-allocated', 'idle'],
    ['most-allocated', 'busy'],
  ])('%s puts the pod on %s', (scoring, expected) => {
    const bindings = schedulePending([busy, idle], [...running, pendingPod()], scoring, seededRandom(1));
    expect(bindings).toEqual([{ podUid: expect.any(String), nodeName: expected }]);
  });

  it.each([
    ['a node without room', [node({ name: 'full', allocatable: { cpu: 100, memory: 8 * Gi, pods: 29 } })]],
    ['a NotReady node', [node({ name: 'launching', ready: false })]],
    ['a cordoned node', [node({ name: 'cordoned', unschedulable: true })]],
    ['a node being disrupted', [node({ name: 'tainted', taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] })]],
    ['a node outside the pod selector', [node({ name: 'other', labels: { team: 'b' } })]],
  ])('leaves the pod pending rather than use %s', (_name, nodes) => {
    const pending = pendingPod({ nodeSelector: nodes[0]!.labels['team'] ? { team: 'a' } : {} });
    expect(schedulePending(nodes, [pending], 'least-allocated', seededRandom(1))).toEqual([]);
  });

  it('sees the room taken by pods bound earlier in the same round', () => {
    const small = node({ name: 'small', allocatable: { cpu: 500, memory: 8 * Gi, pods: 29 } });
    const first = pendingPod({ name: 'first', priority: 10, requests: { cpu: 400, memory: Mi } });
    const second = pendingPod({ name: 'second', requests: { cpu: 400, memory: Mi } });
    const bindings = schedulePending([small], [second, first], 'least-allocated', seededRandom(1));
    // Higher priority first: "first" takes the room, "second" stays pending.
    expect(bindings).toEqual([{ podUid: first.uid, nodeName: 'small' }]);
  });

  it('breaks ties at random, the same way for the same seed', () => {
    const nodes = ['a', 'b', 'c', 'd'].map((name) => node({ name }));
    const pods = Array.from({ length: 8 }, (_, i) => pendingPod({ name: `p${i}`, requests: { cpu: 10, memory: Mi } }));
    const run = (seed: number) => schedulePending(nodes, pods, 'most-allocated', seededRandom(seed)).map((b) => b.nodeName);
    expect(run(7)).toEqual(run(7));
    expect(new Set(run(7)).size).toBe(1); // most-allocated keeps filling the node it chose
  });

  it.each([
    ['hostname', 'kubernetes.io/hostname', ['b']],
    ['zone', 'topology.kubernetes.io/zone', ['c']],
  ])('honours required pod anti-affinity across the %s', (_name, topologyKey, expected) => {
    // "c" is twice the size, so most-allocated scores "b" above it when both are open.
    const nodes = [node({ name: 'a', zone: 'us-east-1a' }), node({ name: 'b', zone: 'us-east-1a' }), node({ name: 'c', zone: 'us-east-1b', allocatable: { cpu: 3860, memory: 14 * Gi, pods: 58 } })];
    const web = on('a', pod({ labels: { app: 'web' }, requests: { cpu: 1500, memory: Mi } }));
    const next = pendingPod({ labels: { app: 'web' }, podAntiAffinity: [{ labelSelector: { matchLabels: { app: 'web' } }, namespaces: [], topologyKey }] });
    // most-allocated would pick "a" (the fullest); the anti-affinity rules it out (and "b" too, by zone).
    const bindings = schedulePending(nodes, [...web, next], 'most-allocated', seededRandom(1));
    expect(bindings.map((b) => b.nodeName)).toEqual(expected);
  });
});
