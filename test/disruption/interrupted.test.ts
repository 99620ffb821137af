// A node whose instance has an interruption notice (the interruption function's taint, usually with the
// cordon) is neither a candidate of a consolidation pass nor a place the pass counts on for pods: not
// when it is cordoned, not when only the taint is left (something uncordoned it), not for pods that
// tolerate every taint. Each case runs next to its control without the taint, which does move.
import { describe, expect, it } from 'vitest';
import { goDurationOrNull as durationOrNull } from '../../src/core/input/duration.ts';
import { runConsolidationPass } from '../../src/core/disruption/pass.ts';
import { InterruptedTaint, type Cluster, type Node } from '../../src/core/model/types.ts';
import { cluster, daemonSetPod, m5Catalog, node, nodePool, on, pod, T0 } from '../builders.ts';

const pass = (c: Cluster) =>
  runConsolidationPass({ cluster: c, nodePools: [nodePool()], catalog: m5Catalog(), nowMs: T0, gates: { spotToSpotConsolidation: false }, parseDuration: durationOrNull });

const interrupted = (n: Node, cordoned: boolean): Node => ({ ...n, taints: [...n.taints, InterruptedTaint], unschedulable: cordoned });

describe('an interrupted node', () => {
  it.each([
    ['tainted and cordoned', true],
    ['tainted only', false],
  ])('%s is not a candidate, even when empty', (_name, cordoned) => {
    const pods = [...on('busy', pod()), daemonSetPod('spot'), daemonSetPod('busy')];
    const control = pass(cluster({ nodes: [node({ name: 'busy' }), node({ name: 'spot' })], pods }));
    expect(control.decisions.map((d) => [d.method, d.nodes])).toEqual([['emptiness', ['spot']]]);

    const out = pass(cluster({ nodes: [node({ name: 'busy' }), interrupted(node({ name: 'spot' }), cordoned)], pods }));
    expect(out.decisions.flatMap((d) => d.nodes)).not.toContain('spot');
    const verdict = out.verdicts.find((v) => v.node.name === 'spot')!;
    expect(verdict.candidate).toBeUndefined();
    expect(verdict.reasons).toContain(`node's instance has an interruption notice (${InterruptedTaint.key} taint)`);
  });

  it.each([
    ['tainted and cordoned', true],
    ['tainted only, and the pod tolerates every taint', false],
  ])('%s is not a destination for the pods of a node the pass would delete', (_name, cordoned) => {
    // `room` cannot be disrupted itself (do-not-disrupt) but has the room for `small`'s pod.
    const room = node({ name: 'room', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
    const pods = [...on('small', pod({ tolerations: [{ operator: 'Exists' }] })), ...on('room', pod())];
    const control = pass(cluster({ nodes: [node({ name: 'small' }), room], pods }));
    expect(control.decisions).toEqual([expect.objectContaining({ action: 'delete', nodes: ['small'] })]);
    expect(Object.values(control.decisions[0]!.podDestinations ?? {})).toEqual(['room']);

    const out = pass(cluster({ nodes: [node({ name: 'small' }), interrupted(room, cordoned)], pods }));
    // Nowhere else to go, and no cheaper type than small's m5.large: the pass does nothing.
    expect(out.decisions).toEqual([]);
  });
});
