// The proof before a command's first eviction: the old nodes' pods placed on the live cluster, the
// command's own replacements first; and, across the commands of one invocation, no room counted twice.
import { describe, expect, it } from 'vitest';
import { proveCommand, withPlacements } from '../../src/core/disruption/proveCommand.ts';
import { ProofSession, SETTLE_DELAY_MS } from '../../src/app/act/proveLive.ts';
import { createSimulator } from '../../src/core/scheduling/simulator.ts';
import type { Cluster } from '../../src/core/model/types.ts';
import { cluster, daemonSetPod, m5Catalog, Mi, node, nodePool, on, pod } from '../builders.ts';

const pools = [nodePool()];
const catalog = m5Catalog();
const prove = (c: Cluster, oldNodes: string[], ownReplacements: string[] = []) =>
  proveCommand({ cluster: c, nodePools: pools, catalog, oldNodes, ownReplacements, simulatorFactory: createSimulator });

describe('proveCommand', () => {
  it.each([
    ['the replacement registered as planned', {}, true],
    ['the replacement lacks a label a pod selects', { labels: {} }, false],
    ['the replacement has less allocatable than the pods need', { allocatable: { cpu: 500, memory: 7134 * Mi, pods: 29 } }, false],
    ['the replacement carries a taint the pods do not tolerate', { taints: [{ key: 'example.com/gpu', effect: 'NoSchedule' as const }] }, false],
    ['the replacement is cordoned', { unschedulable: true }, false],
  ])('%s: proven = %s', (_name, replacementOverrides, ok) => {
    const old = node({ name: 'old', labels: { team: 'web' } });
    const replacement = node({ name: 'new', labels: { team: 'web' }, ...replacementOverrides });
    const pods = on('old', pod({ name: 'web-1', nodeSelector: { team: 'web' }, requests: { cpu: 800, memory: 512 * Mi } }), pod({ name: 'web-2', requests: { cpu: 800, memory: 512 * Mi } }));
    const proof = prove(cluster({ nodes: [old, replacement], pods: [...pods, daemonSetPod('old')] }), ['old'], ['new']);
    expect(proof.ok).toBe(ok);
    if (!proof.ok) expect(proof.unplaced.map((u) => u.pod)).toContain('default/web-1');
    if (proof.ok) expect(proof.placed.map((p) => [p.pod.name, p.node]).sort()).toEqual([['web-1', 'new'], ['web-2', 'new']]);
  });

  it('a command with nothing to move is proven at once; daemonset and finished pods never count', () => {
    const c = cluster({ nodes: [node({ name: 'old' })], pods: [daemonSetPod('old'), ...on('old', pod({ phase: 'Succeeded' }))] });
    expect(prove(c, ['old'])).toEqual({ ok: true, placed: [] });
  });

  it('puts the pods on the command\'s own replacement before the room other nodes have', () => {
    const c = cluster({
      // (Alike but for the name, 'another' would win a tie.)
      nodes: [node({ name: 'old' }), node({ name: 'new' }), node({ name: 'another' })],
      pods: on('old', pod({ name: 'a', requests: { cpu: 900, memory: 128 * Mi } })),
    });
    const proof = prove(c, ['old'], ['new']);
    expect(proof.ok && proof.placed.map((p) => p.node)).toEqual(['new']);
  });

  it('withPlacements keeps the room of a placed pod the reading no longer shows', () => {
    const c = cluster({ nodes: [node({ name: 'x' })], pods: [] });
    const gone = pod({ name: 'evicted', requests: { cpu: 1500, memory: 128 * Mi } });
    expect(withPlacements(c, [{ pod: gone, node: 'x' }]).pods.map((p) => [p.name, p.nodeName])).toEqual([['evicted', 'x']]);
    // A node no longer there takes nothing.
    expect(withPlacements(c, [{ pod: gone, node: 'gone' }]).pods).toEqual([]);
  });
});

describe('ProofSession: commands proven in one invocation', () => {
  it('the second command cannot take the room the first one was proven into', async () => {
    // One spare node with room for one of the two big pods; each command alone would be proven.
    const spare = node({ name: 'spare' });
    const world = {
      cluster: cluster({
        // a and b are being drained by their commands: cordoned, as the actuator leaves them.
        nodes: [node({ name: 'a', unschedulable: true }), node({ name: 'b', unschedulable: true }), spare],
        pods: [...on('a', pod({ name: 'big-a', requests: { cpu: 1200, memory: 128 * Mi } })), ...on('b', pod({ name: 'big-b', requests: { cpu: 1200, memory: 128 * Mi } }))],
      }),
      nodePools: pools,
      catalog,
    };
    let reads = 0;
    const session = new ProofSession(async () => {
      reads += 1;
      return world;
    }, () => 0);
    expect((await session.prove(['a'])).ok).toBe(true);
    const second = await session.prove(['b']);
    expect(second.ok).toBe(false);
    expect(reads).toBe(1);
    // A new round reads again, and still counts the first command's pods where they were proven to go.
    session.newRound();
    expect((await session.prove(['b'])).ok).toBe(false);
    expect(reads).toBe(2);
  });

  it('a node another command tainted after the reading was taken takes no pod; given back, it does again', async () => {
    // b is the better fit (best fit: the least room left), c has room too.
    const nodes = [node({ name: 'a', unschedulable: true }), node({ name: 'b' }), node({ name: 'c' })];
    const world = { cluster: cluster({ nodes, pods: [...on('a', pod({ name: 'p', requests: { cpu: 900, memory: 128 * Mi } })), ...on('b', pod({ name: 'resident', requests: { cpu: 500, memory: 128 * Mi } }))] }), nodePools: pools, catalog };
    // (A new session each time: a session counts a pod it proved as placed.)
    const proveClosing = async (closed: string[], opened: string[] = []) => {
      const session = new ProofSession(async () => world, () => 0);
      for (const n of closed) session.close(n, true);
      for (const n of opened) session.close(n, false);
      return session.prove(['a']);
    };
    expect(await proveClosing(['b'])).toMatchObject({ ok: true, placed: [{ node: 'c' }] });
    expect(await proveClosing(['b', 'c'])).toMatchObject({ ok: false, unplaced: [{ pod: 'default/p' }] });
    expect(await proveClosing(['b', 'c'], ['b'])).toMatchObject({ ok: true, placed: [{ node: 'b' }] });
  });

  it('reads again when the command\'s replacement is not in the reading yet', async () => {
    const before = { cluster: cluster({ nodes: [node({ name: 'a' })], pods: on('a', pod({ name: 'p' })) }), nodePools: pools, catalog };
    const after = { ...before, cluster: { ...before.cluster, nodes: [...before.cluster.nodes, node({ name: 'new' })] } };
    const readings = [before, after];
    const session = new ProofSession(async () => readings.shift()!, () => 0);
    expect((await session.prove(['a'])).ok).toBe(false);
    const proof = await session.prove(['a'], ['new']);
    expect(proof.ok && proof.placed.map((p) => p.node)).toEqual(['new']);
  });
});

describe('pending pods in the proof', () => {
  const tight = () =>
    cluster({
      nodes: [node({ name: 'old', unschedulable: true }), node({ name: 'other' })],
      pods: [
        ...on('old', pod({ name: 'moving', requests: { cpu: 1000, memory: 128 * Mi } })),
        ...on('other', pod({ name: 'resident', requests: { cpu: 500, memory: 128 * Mi } })),
      ],
    });

  it.each([
    ['no pending pod: the moved pod has room', [], true],
    ['a pending pod the cluster has room for keeps that room: the moved pod has none', [pod({ name: 'waiting', phase: 'Pending', requests: { cpu: 800, memory: 128 * Mi } })], false],
    ['a pending pod that fits nowhere is left out (it waits for new capacity whatever the command does)', [pod({ name: 'huge', phase: 'Pending', requests: { cpu: 64_000, memory: 128 * Mi } })], true],
  ])('%s', (_name, pending, ok) => {
    const base = tight();
    const proof = prove({ ...base, pods: [...base.pods, ...pending] }, ['old']);
    expect(proof.ok).toBe(ok);
    if (!proof.ok) expect(proof.unplaced.map((u) => u.pod)).toEqual(['default/moving']);
  });
});

describe('ProofSession.unsettled: the wait before a first eviction', () => {
  const session = (world: { cluster: Cluster }, clock: { now: number }) => {
    const reads: number[] = [];
    const s = new ProofSession(
      async () => {
        reads.push(clock.now);
        return { cluster: world.cluster, nodePools: pools, catalog };
      },
      () => clock.now,
    );
    return { s, reads };
  };
  const settled = () => cluster({ nodes: [node({ name: 'a' })], pods: on('a', pod({ name: 'web' })) });

  it('right after an eviction it waits; once the delay has passed it reads the cluster again and goes on', async () => {
    const clock = { now: 1_000_000 };
    const { s, reads } = session({ cluster: settled() }, clock);
    expect(await s.unsettled()).toBeUndefined();
    expect(reads).toEqual([1_000_000]);
    s.noteEvicted();
    clock.now += SETTLE_DELAY_MS - 1;
    expect(await s.unsettled()).toMatch(/evicted 5 s ago/);
    clock.now += 1;
    // The reading of before the eviction does not show where the evicted pods went: a new one is taken.
    expect(await s.unsettled()).toBeUndefined();
    expect(reads).toEqual([1_000_000, 1_000_000 + SETTLE_DELAY_MS]);
    // That reading is recent enough for the next command.
    expect(await s.unsettled()).toBeUndefined();
    expect(reads).toHaveLength(2);
  });

  it.each([
    ['a pending pod the cluster has room for', [pod({ name: 'web-r1', phase: 'Pending' })], /^1 pending pod\(s\) the cluster has room for are not bound yet \(default\/web-r1\)$/],
    [
      'three such pods (all named)',
      ['w1', 'w2', 'w3'].map((name) => pod({ name, phase: 'Pending' })),
      /^3 pending pod\(s\) the cluster has room for are not bound yet \(default\/w1, default\/w2, default\/w3\)$/,
    ],
    [
      'four such pods (three named)',
      ['w1', 'w2', 'w3', 'w4'].map((name) => pod({ name, phase: 'Pending' })),
      /^4 pending pod\(s\) the cluster has room for are not bound yet \(default\/w1, default\/w2, default\/w3, \.\.\.\)$/,
    ],
    [
      'a terminating StatefulSet pod (its successor comes under the same name once it is gone)',
      [pod({ name: 'db-0', nodeName: 'a', terminating: true, ownerReferences: [{ kind: 'StatefulSet', name: 'db', controller: true }] })],
      /StatefulSet pod default\/db-0 is terminating/,
    ],
  ])('waits for %s', async (_name, extra, why) => {
    const base = settled();
    const { s } = session({ cluster: { ...base, pods: [...base.pods, ...extra] } }, { now: 0 });
    expect(await s.unsettled()).toMatch(why);
  });

  it.each([
    ['a pending pod that fits nowhere', pod({ name: 'huge', phase: 'Pending', requests: { cpu: 64_000, memory: 128 * Mi } })],
    ['a terminating pod of a ReplicaSet (its successor is created at once, as a pending pod)', pod({ name: 'web-x', nodeName: 'a', terminating: true })],
  ])('does not wait for %s', async (_name, extra) => {
    const base = settled();
    const { s } = session({ cluster: { ...base, pods: [...base.pods, extra] } }, { now: 0 });
    expect(await s.unsettled()).toBeUndefined();
  });
});
