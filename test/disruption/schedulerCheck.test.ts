// Issue 11 item 4: a move must also hold when kube-scheduler places the evicted pods (least allocated).
import { describe, expect, it } from 'vitest';
import { goDurationOrNull as durationOrNull } from '../../src/core/input/duration.ts';
import { runConsolidationPass } from '../../src/core/disruption/pass.ts';
import { cluster, Gi, m5Catalog, Mi, node, nodePool, on, pod, T0 } from '../builders.ts';

const xlarge = (name: string, keep = false) =>
  node({ name, instanceType: 'm5.xlarge', allocatable: { cpu: 3920, memory: 14162 * Mi, pods: 58 }, annotations: keep ? { 'karpenter.sh/do-not-disrupt': 'true' } : {} });

/**
 * `c` holds a 1000m and a 2000m pod. `a` has 1000m free, `b` 2000m: packed tightly both fit, but if the
 * 1000m pod comes first kube-scheduler puts it on the emptier `b`, and the 2000m pod then fits nowhere.
 */
function fragile(priorityOfLarge = 0) {
  const nodes = [xlarge('a', true), xlarge('b', true), xlarge('c')];
  const pods = [
    ...on('a', pod({ requests: { cpu: 2920, memory: Gi } })),
    ...on('b', pod({ requests: { cpu: 1920, memory: Gi } })),
    ...on('c', pod({ name: 'small', requests: { cpu: 1000, memory: Gi } }), pod({ name: 'large', priority: priorityOfLarge, requests: { cpu: 2000, memory: Gi } })),
  ];
  return cluster({ nodes, pods });
}

const run = (c: ReturnType<typeof fragile>, schedulerCheck?: boolean) =>
  runConsolidationPass({
    cluster: c,
    nodePools: [nodePool()],
    catalog: m5Catalog(),
    nowMs: T0,
    gates: { spotToSpotConsolidation: false },
    parseDuration: durationOrNull,
    ...(schedulerCheck === undefined ? {} : { schedulerCheck }),
  });

describe('kube-scheduler check', () => {
  it.each([
    ['best fit alone would delete c', false, 0, 1],
    ['the check refuses it: in queue order the small pod takes the room the large one needs', undefined, 0, 0],
    ['with the large pod first in the queue (higher priority) the move holds', undefined, 100, 1],
  ] as const)('%s', (_name, check, priority, count) => {
    const out = run(fragile(priority), check);
    expect(out.decisions).toHaveLength(count);
    if (count === 1) expect(out.decisions[0]).toMatchObject({ action: 'delete', nodes: ['c'] });
    else expect((out.notes.get('c') ?? []).join(' ')).toMatch(/kube-scheduler.*pod default\/large would stay Pending/);
  });
});
