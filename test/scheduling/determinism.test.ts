// The simulation is a pure function of its input: same answer every time, whatever the order of the
// pods, and one simulation never leaks into the next.
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/core/model/types.ts';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import type { SimulationRequest, SimulationResult } from '../../src/core/scheduling/types.ts';
import { cluster, daemonSet, Gi, m5Catalog, Mi, node, nodePool, on, pod } from '../builders.ts';
import { HOSTNAME, spread, term, ZONE } from './helpers.ts';

function fixture() {
  const zones = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
  const nodes = Array.from({ length: 9 }, (_, i) => node({ name: `n${i}`, zone: zones[i % 3] }));
  const pods: Pod[] = [];
  nodes.forEach((n, i) => {
    for (let j = 0; j < 4; j++) {
      const app = `app-${(i + j) % 3}`;
      pods.push(
        ...on(
          n.name,
          pod({
            name: `p${i}-${j}`,
            labels: { app },
            requests: { cpu: 150 + 50 * ((i * j) % 4), memory: (256 + 128 * j) * Mi },
            ...(j === 0 ? { podAntiAffinity: [term({ app }, HOSTNAME)] } : {}),
            ...(j === 1 ? { topologySpread: [spread({ app }, ZONE, { maxSkew: 2 })] } : {}),
          }),
        ),
      );
    }
  });
  const simulator = createSimulator({ cluster: cluster({ nodes, pods, daemonSets: [daemonSet()] }), nodePools: [nodePool()], catalog: m5Catalog() });
  const request = (excluded: string[], maxNewNodes: number, reorder = false): SimulationRequest => {
    const moving = pods.filter((p) => excluded.includes(p.nodeName!));
    return { excludedNodes: new Set(excluded), pods: reorder ? [...moving].reverse() : moving, maxNewNodes };
  };
  return { simulator, request };
}

const summary = (r: SimulationResult) => ({
  placements: r.placements.map((p) => `${p.pod.name}->${p.nodeName}`).sort(),
  newNodes: r.newNodes.map((n) => ({ pool: n.nodePool, pods: n.pods.map((p) => p.name), options: n.options.map((o) => o.instanceType.name), requirements: n.requirements })),
  unschedulable: r.unschedulable.map((u) => `${u.pod.name}: ${u.reason}`),
});

describe('determinism', () => {
  it('gives the same answer for the same request, repeatedly and in any pod order', () => {
    const { simulator, request } = fixture();
    const first = summary(simulator.simulate(request(['n0', 'n4'], 1)));
    expect(first.placements.length + first.unschedulable.length).toBe(8);
    expect(summary(simulator.simulate(request(['n0', 'n4'], 1)))).toEqual(first);
    expect(summary(simulator.simulate(request(['n0', 'n4'], 1, true)))).toEqual(first);
  });

  it('does not carry one simulation into the next', () => {
    const { simulator, request } = fixture();
    const before = summary(simulator.simulate(request(['n1'], 0)));
    simulator.simulate(request(['n2', 'n3', 'n5'], 2));
    simulator.simulate(request(['n1', 'n7'], 1));
    expect(summary(simulator.simulate(request(['n1'], 0)))).toEqual(before);
  });

  it('a fresh simulator built from the same input agrees', () => {
    const a = fixture();
    const b = fixture();
    // Names and uids differ between fixtures only by builder sequence numbers; compare by name.
    expect(summary(a.simulator.simulate(a.request(['n3', 'n6'], 1)))).toEqual(summary(b.simulator.simulate(b.request(['n3', 'n6'], 1))));
  });

  it('moving a pod off a node that stays frees its capacity there', () => {
    const target = node({ name: 'solo', allocatable: { cpu: 1000, memory: 4 * Gi, pods: 10 } });
    const stays = on('solo', pod({ name: 'fat', requests: { cpu: 900, memory: Gi } }))[0]!;
    const simulator = createSimulator({ cluster: cluster({ nodes: [target], pods: [stays] }), nodePools: [nodePool()], catalog: m5Catalog() });
    const result = simulator.simulate({ excludedNodes: new Set(), pods: [stays], maxNewNodes: 0 });
    expect(result.placements.map((p) => p.nodeName)).toEqual(['solo']);
  });
});
