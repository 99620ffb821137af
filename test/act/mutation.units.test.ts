// Mutation-testing gaps (npm run mutation) in what keeps a node alive (drain.ts), what a command
// remembers between invocations (commandDetail.ts) and the proofs of one invocation (proveLive.ts):
// tested without a cluster.
import { describe, expect, it } from 'vitest';
import { podDisposition, podsThatCount, STUCK_TERMINATING_AFTER_MS } from '../../src/app/act/drain.ts';
import { addError, eventKey, eventSent, formatDetail, listPods, parseDetail, rememberEvent, type CommandDetail } from '../../src/app/act/commandDetail.ts';
import { ProofSession } from '../../src/app/act/proveLive.ts';
import { cluster, m5Catalog, node, nodePool, on, pod, T0 } from '../builders.ts';

const names = (pods: readonly { name: string }[]) => pods.map((p) => p.name);

describe('which pods keep a node alive', () => {
  const web = pod({ name: 'web' });
  const done = pod({ name: 'done', phase: 'Succeeded' });
  const failed = pod({ name: 'failed', phase: 'Failed' });
  const daemon = pod({ name: 'daemon', isDaemonSetPod: true });
  const mirror = pod({ name: 'mirror', isMirrorPod: true });
  const leaving = pod({ name: 'leaving', terminating: true, deletingSince: T0 - 10_000 });
  const pinned = pod({ name: 'pinned', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
  const notPinned = pod({ name: 'not-pinned', annotations: { 'karpenter.sh/do-not-disrupt': 'false' } });
  const bare = pod({ name: 'bare', ownerReferences: [] });
  const ownedNotController = pod({ name: 'owned', ownerReferences: [{ kind: 'ReplicaSet', name: 'rs', controller: false }] });

  it('evicts a controlled pod, waits for a terminating one, never evicts a pinned or a bare one, ignores what dies with the node', () => {
    expect(podDisposition(web)).toBe('evict');
    expect(podDisposition(notPinned)).toBe('evict');
    expect(podDisposition(leaving)).toBe('leaving');
    expect(podDisposition(pinned)).toBe('protected');
    expect(podDisposition(bare)).toBe('protected');
    expect(podDisposition(ownedNotController)).toBe('protected');
    for (const p of [done, failed, daemon, mirror]) expect(podDisposition(p), p.name).toBe('ignore');
    // A finished pod that is also terminating does not count either.
    expect(podDisposition(pod({ name: 'x', phase: 'Succeeded', terminating: true }))).toBe('ignore');
    expect(podDisposition(pod({ name: 'y', isDaemonSetPod: true, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }))).toBe('ignore');
  });

  it('counts everything but what is ignored', () => {
    expect(names(podsThatCount([web, done, failed, daemon, mirror, leaving, pinned, bare]))).toEqual(['web', 'leaving', 'pinned', 'bare']);
  });

  it('on a node that is not Ready, writes off a pod terminating for longer than its grace period plus a minute, and only such a pod', () => {
    const nowMs = T0;
    const stuck = pod({ name: 'stuck', terminating: true, deletingSince: nowMs - STUCK_TERMINATING_AFTER_MS - 1 });
    const exactly = pod({ name: 'exactly', terminating: true, deletingSince: nowMs - STUCK_TERMINATING_AFTER_MS });
    const recent = pod({ name: 'recent', terminating: true, deletingSince: nowMs - 1_000 });
    const noTimestamp = pod({ name: 'no-timestamp', terminating: true });
    const oldButRunning = pod({ name: 'running', deletingSince: nowMs - 10 * STUCK_TERMINATING_AFTER_MS });
    const all = [stuck, exactly, recent, noTimestamp, oldButRunning, web];
    expect(names(podsThatCount(all, { nowMs }))).toEqual(['exactly', 'recent', 'no-timestamp', 'running', 'web']);
    // On a Ready node the kubelet confirms: nothing is written off.
    expect(names(podsThatCount(all))).toEqual(names(all));
    expect(STUCK_TERMINATING_AFTER_MS).toBe(60_000);
  });
});

describe('the command detail', () => {
  it('reads back what it wrote; a text that is not a JSON object becomes the note', () => {
    const detail: CommandDetail = { proven: true, gone: ['a'], note: 'x' };
    expect(parseDetail(formatDetail(detail))).toEqual(detail);
    expect(parseDetail(undefined)).toStrictEqual({});
    expect(parseDetail('')).toStrictEqual({});
    expect(parseDetail('drained by hand')).toEqual({ note: 'drained by hand' });
    expect(parseDetail('[1,2]')).toEqual({ note: '[1,2]' });
    expect(parseDetail('null')).toEqual({ note: 'null' });
    expect(parseDetail('"text"')).toEqual({ note: '"text"' });
  });

  it('keeps the last five errors, newest last', () => {
    const detail: CommandDetail = {};
    for (let i = 1; i <= 7; i += 1) addError(detail, `e${i}`);
    expect(detail.errors).toEqual(['e3', 'e4', 'e5', 'e6', 'e7']);
  });

  it('lists at most ten pods', () => {
    const keys = Array.from({ length: 12 }, (_, i) => `ns/p${i}`);
    expect(listPods(keys)).toEqual(keys.slice(0, 10));
    expect(listPods(keys.slice(0, 3))).toEqual(keys.slice(0, 3));
  });

  it('remembers events sent, by node, reason and message, and forgets the oldest past a hundred', () => {
    const detail: CommandDetail = {};
    const key = eventKey('n1', 'DisruptionBlocked', 'text');
    expect(key).toMatch(/^[0-9a-f]{16}$/);
    expect(eventKey('n2', 'DisruptionBlocked', 'text')).not.toBe(key);
    expect(eventKey('n1', 'DisruptionAbandoned', 'text')).not.toBe(key);
    expect(eventKey('n1', 'DisruptionBlocked', 'other')).not.toBe(key);
    // The parts are separated: moving a character from one to the next is another event.
    expect(eventKey('n1D', 'isruptionBlocked', 'text')).not.toBe(key);
    expect(eventSent(detail, key)).toBe(false);
    rememberEvent(detail, key);
    expect(eventSent(detail, key)).toBe(true);
    expect(detail.events).toEqual([key]);
    for (let i = 0; i < 100; i += 1) rememberEvent(detail, eventKey('n', 'r', String(i)));
    expect(detail.events).toHaveLength(100);
    expect(eventSent(detail, key)).toBe(false);
    expect(eventSent(detail, eventKey('n', 'r', '0'))).toBe(true);
  });
});

describe('the proofs of one invocation', () => {
  it('a reading that already shows the command\'s replacement is not taken again', async () => {
    const world = { cluster: cluster({ nodes: [node({ name: 'a' }), node({ name: 'new' })], pods: on('a', pod({ name: 'p' })) }), nodePools: [nodePool()], catalog: m5Catalog() };
    let reads = 0;
    const session = new ProofSession(async () => {
      reads += 1;
      return world;
    }, () => 0);
    const proof = await session.prove(['a'], ['new']);
    expect(proof.ok && proof.placed.map((p) => p.node)).toEqual(['new']);
    expect(reads).toBe(1);
  });

  it('a reading that failed is not kept: the next proof reads again', async () => {
    const world = { cluster: cluster({ nodes: [node({ name: 'a' }), node({ name: 'b' })], pods: on('a', pod({ name: 'p' })) }), nodePools: [nodePool()], catalog: m5Catalog() };
    let reads = 0;
    const session = new ProofSession(async () => {
      reads += 1;
      if (reads === 1) throw new Error('the API server is restarting');
      return world;
    }, () => 0);
    await expect(session.prove(['a'])).rejects.toThrow('the API server is restarting');
    const proof = await session.prove(['a']);
    expect(proof.ok && proof.placed.map((p) => [p.pod.name, p.node])).toEqual([['p', 'b']]);
    expect(reads).toBe(2);
    // A proof that fails is an answer (the command rolls back), not an error.
    const full = { ...world, cluster: cluster({ nodes: [node({ name: 'a' })], pods: on('a', pod({ name: 'q' })) }) };
    const failing = new ProofSession(async () => full, () => 0);
    expect((await failing.prove(['a'])).ok).toBe(false);
  });
});
