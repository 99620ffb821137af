// Karpenter's preference policy Respect: preferences count as required, then are given up one at a time
// in Karpenter's order (pod affinity, pod anti-affinity, node affinity, ScheduleAnyway spread) only when
// the pod fits nowhere with them.
import { describe, expect, it } from 'vitest';
import { hasPreferences, originalPod, parsePreferencePolicy, preferenceLadder } from '../../src/core/scheduling/preferences.ts';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import type { PodAffinityTerm, Requirement } from '../../src/core/model/types.ts';
import { cluster, m5Catalog, node, nodePool, on, pod } from '../builders.ts';

const hostAway = (app: string): PodAffinityTerm => ({ labelSelector: { matchLabels: { app } }, namespaces: [], topologyKey: 'kubernetes.io/hostname' });
const zone = (value: string): Requirement => ({ key: 'topology.kubernetes.io/zone', operator: 'In', values: [value] });

describe('the preference ladder', () => {
  const p = pod({
    name: 'web',
    labels: { app: 'web' },
    requiredNodeAffinity: [{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] }],
    preferredPodAffinity: [{ weight: 10, term: hostAway('cache') }],
    preferredPodAntiAffinity: [
      { weight: 5, term: hostAway('db') },
      { weight: 50, term: hostAway('web') },
    ],
    preferredNodeAffinity: [
      { weight: 1, preference: { matchExpressions: [zone('us-east-1b')] } },
      { weight: 80, preference: { matchExpressions: [zone('us-east-1a')] } },
    ],
    topologySpread: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'web' } } }],
  });
  const ladder = preferenceLadder(p);

  it('gives up one preference a step, in Karpenter order, heaviest term first', () => {
    const shape = ladder.map((step) => ({
      affinity: step.podAffinity.length,
      anti: step.podAntiAffinity.map((t) => t.labelSelector?.matchLabels?.['app']),
      zones: step.requiredNodeAffinity[0]!.matchExpressions.filter((e) => e.key === 'topology.kubernetes.io/zone').map((e) => e.values[0]),
      spread: step.topologySpread.filter((c) => c.whenUnsatisfiable === 'DoNotSchedule').length,
    }));
    expect(shape).toEqual([
      { affinity: 1, anti: ['web', 'db'], zones: ['us-east-1a'], spread: 1 },
      { affinity: 0, anti: ['web', 'db'], zones: ['us-east-1a'], spread: 1 },
      { affinity: 0, anti: ['db'], zones: ['us-east-1a'], spread: 1 },
      { affinity: 0, anti: [], zones: ['us-east-1a'], spread: 1 },
      { affinity: 0, anti: [], zones: ['us-east-1b'], spread: 1 },
      { affinity: 0, anti: [], zones: [], spread: 1 },
    ]);
  });

  it('keeps the required terms in every step, and each step leads back to the pod', () => {
    for (const step of ladder) {
      expect(step.requiredNodeAffinity[0]!.matchExpressions[0]).toEqual(p.requiredNodeAffinity[0]!.matchExpressions[0]);
      expect(originalPod(step)).toBe(p);
    }
    expect(preferenceLadder(p)).toBe(ladder);
  });

  it.each([
    ['no preference: nothing to relax', pod(), false],
    ['a ScheduleAnyway spread is a preference', pod({ topologySpread: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway' }] }), true],
    ['a DoNotSchedule spread only is no preference', pod({ topologySpread: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule' }] }), false],
  ])('%s', (_name, candidate, expected) => {
    expect(hasPreferences(candidate)).toBe(expected);
    expect(preferenceLadder(candidate).length > 0).toBe(expected);
  });

  it.each([
    [undefined, 'Respect'],
    ['', 'Respect'],
    ['ignore', 'Ignore'],
    ['Respect', 'Respect'],
  ])('PREFERENCE_POLICY %j is %s', (text, policy) => {
    expect(parsePreferencePolicy(text)).toBe(policy);
  });

  it('refuses anything else, naming the source', () => {
    expect(() => parsePreferencePolicy('Prefer', '--preference-policy')).toThrow(/--preference-policy.*"Prefer" is not Respect or Ignore/);
  });
});

describe('placing with preferences respected', () => {
  const web = (name: string) => pod({ name, labels: { app: 'web' }, preferredPodAntiAffinity: [{ weight: 100, term: hostAway('web') }] });
  const c = cluster({ nodes: [node({ name: 'a' }), node({ name: 'b' })], pods: [...on('a', web('w1')), ...on('b', pod({ name: 'other' }))] });
  const simulator = createSimulator({ cluster: c, nodePools: [nodePool()], catalog: m5Catalog() });
  const incoming = web('w2');

  it.each([
    ['Ignore: best fit, next to the other replica', 'Ignore', 0, ['a']],
    ['Respect: the node without a replica', 'Respect', 0, ['b']],
  ] as const)('%s', (_name, preferences, maxNewNodes, where) => {
    // a is the tighter fit (best fit's choice), b has no replica.
    const busy = cluster({ ...c, pods: [...c.pods, ...on('a', pod({ name: 'filler', requests: { cpu: 1000, memory: 1024 ** 2 } }))] });
    const result = createSimulator({ cluster: busy, nodePools: [nodePool()], catalog: m5Catalog() }).simulate({ excludedNodes: new Set(), pods: [incoming], maxNewNodes, preferences });
    expect(result.placements.map((p) => p.nodeName)).toEqual(where);
    expect(result.placements[0]!.pod).toBe(incoming);
  });

  it('Respect opens a new node rather than break the preference, when one may be opened', () => {
    const full = cluster({ nodes: [node({ name: 'a' })], pods: on('a', web('w1')) });
    const result = createSimulator({ cluster: full, nodePools: [nodePool()], catalog: m5Catalog() }).simulate({ excludedNodes: new Set(), pods: [incoming], maxNewNodes: 1, preferences: 'Respect' });
    expect(result.placements.map((p) => p.nodeName)).toEqual(['new:0']);
    expect(result.newNodes[0]!.pods).toEqual([incoming]);
  });

  it('Respect gives the preference up when nothing fits with it', () => {
    const full = cluster({ nodes: [node({ name: 'a' })], pods: on('a', web('w1')) });
    const result = createSimulator({ cluster: full, nodePools: [nodePool()], catalog: m5Catalog() }).simulate({ excludedNodes: new Set(), pods: [incoming], maxNewNodes: 0, preferences: 'Respect' });
    expect(result.placements.map((p) => p.nodeName)).toEqual(['a']);
  });

  it("kube-scheduler's placement (least-allocated) only scores preferences: Respect does not apply", () => {
    const result = simulator.simulate({ excludedNodes: new Set(), pods: [incoming], maxNewNodes: 0, preferences: 'Respect', placement: 'least-allocated' });
    // least allocated: b (one 100m pod) and a (one 100m pod) tie on room; names break the tie.
    expect(result.placements.map((p) => p.nodeName)).toEqual(['a']);
  });
});
