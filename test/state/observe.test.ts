// Pod events, emptiness and grace protection (docs/how-a-pass-decides.md, "Time and state between
// passes"), pass by pass with a fake clock (plain numbers).
import { describe, expect, it } from 'vitest';
import type { Cluster, Pod } from '../../src/core/model/types.ts';
import {
  consolidatableAt,
  countsForPodEvents,
  emptyFor,
  emptyLongEnough,
  EMPTY_POD_SET_FINGERPRINT,
  graceProtection,
  isConsolidatable,
  observeNodes,
  recordEvaluation,
} from '../../src/core/state/observe.ts';
import { emptyPassState, NODE_STATE_TTL_MS, type NodeState, type PassState } from '../../src/core/state/types.ts';
import { cluster, daemonSetPod, hours, minutes, node, nodeState, on, pod, T0 } from '../builders.ts';

/** One pass: observe the cluster against the previous state, as a pass would. */
function pass(c: Cluster, previous: PassState, nowMs: number): PassState {
  return { ...previous, nodes: observeNodes(c, previous, nowMs) };
}

const N = 'ip-10-0-1-7.ec2.internal';
const theNode = node({ name: N, createdAt: T0 - hours(24), readySince: T0 - hours(23) });
const P1 = T0 - minutes(10); // the earlier pass
const P2 = T0; // this pass

const web = pod({ name: 'web', createdAt: T0 - hours(5), startedAt: T0 - hours(4) });
const api = pod({ name: 'api', createdAt: T0 - hours(6), startedAt: T0 - hours(6) });

describe('observeNodes: last pod event', () => {
  it.each<{ name: string; before: Pod[] | 'no record'; after: Pod[]; lastPodEventAt: number; emptySince?: number }>([
    { name: 'first sight, no pod: Ready time', before: 'no record', after: [], lastPodEventAt: T0 - hours(23), emptySince: T0 - hours(23) },
    { name: 'first sight with pods: latest pod time, no fingerprint event', before: 'no record', after: [web, api], lastPodEventAt: T0 - hours(4) },
    { name: 'nothing changed: times only', before: [web, api], after: [web, api], lastPodEventAt: T0 - hours(4) },
    { name: 'pod arrives: dated by its own times, not the pass (only departures count at the pass time)', before: [web], after: [web, api], lastPodEventAt: T0 - hours(4) },
    { name: 'pod leaves: pass time', before: [web, api], after: [web], lastPodEventAt: P2 },
    { name: 'node empties: pass time, empty since this pass', before: [web], after: [], lastPodEventAt: P2, emptySince: P2 },
    {
      name: 'pod goes terminal (Succeeded): it leaves the set',
      before: [web, api],
      after: [web, { ...api, phase: 'Succeeded' }],
      lastPodEventAt: P2,
    },
    { name: 'pod goes Failed: it leaves the set', before: [web, api], after: [web, { ...api, phase: 'Failed' }], lastPodEventAt: P2 },
    { name: 'pod being deleted: it leaves the set', before: [web, api], after: [web, { ...api, terminating: true }], lastPodEventAt: P2 },
    { name: 'daemonset pod arrives: no event', before: [web], after: [web, daemonSetPod(N, { createdAt: P2 - 1, startedAt: P2 - 1 })], lastPodEventAt: T0 - hours(4) },
    {
      name: 'mirror pod arrives: no event',
      before: [web],
      after: [web, pod({ name: 'kube-proxy', isMirrorPod: true, createdAt: P2 - 1, startedAt: P2 - 1 })],
      lastPodEventAt: T0 - hours(4),
    },
    {
      name: 'node with only daemonset pods is empty (Ready time)',
      before: 'no record',
      after: [daemonSetPod(N, { createdAt: T0 - hours(1), startedAt: T0 - hours(1) })],
      lastPodEventAt: T0 - hours(23),
      emptySince: T0 - hours(23),
    },
    {
      name: 'new pod started after the last pass: its start time',
      before: [web],
      after: [web, pod({ name: 'new', createdAt: P2 - minutes(3), startedAt: P2 - minutes(2) })],
      lastPodEventAt: P2 - minutes(2),
    },
  ])('$name', ({ before, after, lastPodEventAt, emptySince }) => {
    const first = before === 'no record' ? emptyPassState() : pass(cluster({ nodes: [theNode], pods: on(N, ...before) }), emptyPassState(), P1);
    const second = pass(cluster({ nodes: [theNode], pods: on(N, ...after) }), first, P2);
    const record = second.nodes[N]!;
    expect(record.lastPodEventAt).toBe(lastPodEventAt);
    expect(record.emptySince).toBe(emptySince);
    expect(record.podCount).toBe(on(N, ...after).filter(countsForPodEvents).length);
  });

  it('a node never Ready falls back to its creation time', () => {
    const notReady = node({ name: N, ready: false, readySince: undefined, createdAt: T0 - minutes(2) });
    expect(observeNodes(cluster({ nodes: [notReady] }), emptyPassState(), T0)[N]!.lastPodEventAt).toBe(T0 - minutes(2));
  });

  it('a departure seen by an earlier pass stays the last event while nothing else happens', () => {
    const c1 = cluster({ nodes: [theNode], pods: on(N, web, api) });
    const c2 = cluster({ nodes: [theNode], pods: on(N, web) });
    let state = pass(c1, emptyPassState(), T0);
    state = pass(c2, state, T0 + minutes(3)); // api left
    state = pass(c2, state, T0 + minutes(6));
    state = pass(c2, state, T0 + minutes(9));
    expect(state.nodes[N]!.lastPodEventAt).toBe(T0 + minutes(3));
  });

  it('the order pods are listed in does not matter', () => {
    const a = observeNodes(cluster({ nodes: [theNode], pods: on(N, web, api) }), emptyPassState(), T0);
    const b = observeNodes(cluster({ nodes: [theNode], pods: on(N, api, web) }), emptyPassState(), T0);
    expect(a[N]!.podSetFingerprint).toBe(b[N]!.podSetFingerprint);
    expect(observeNodes(cluster({ nodes: [theNode] }), emptyPassState(), T0)[N]!.podSetFingerprint).toBe(EMPTY_POD_SET_FINGERPRINT);
  });

  it('nodes that disappeared are dropped; new nodes are added with version 0', () => {
    const gone = node({ name: 'gone' });
    const state = pass(cluster({ nodes: [theNode, gone] }), emptyPassState(), P1);
    const stored: PassState = { ...state, nodes: { [N]: { ...state.nodes[N]!, version: 4 }, gone: { ...state.nodes.gone!, version: 2 } } };
    const next = observeNodes(cluster({ nodes: [theNode, node({ name: 'new' })] }), stored, P2);
    expect(Object.keys(next).sort()).toEqual([N, 'new']);
    expect(next[N]!.version).toBe(4);
    expect(next.new!.version).toBe(0);
  });

  it('a reused node name starts afresh but keeps the stored version (for the conditional write)', () => {
    const old: NodeState = nodeState({
      name: N,
      nodeCreatedAt: T0 - hours(100),
      podSetFingerprint: 'something else',
      lastPodEventAt: T0 - minutes(1),
      graceProtectedUntil: T0 + hours(1),
      lastEvaluatedAt: T0 - minutes(1),
      version: 7,
    });
    const record = observeNodes(cluster({ nodes: [theNode] }), { ...emptyPassState(), nodes: { [N]: old } }, T0)[N]!;
    expect(record.lastPodEventAt).toBe(T0 - hours(23)); // Ready time, no "pod set changed" event
    expect(record.graceProtectedUntil).toBeUndefined();
    expect(record.lastEvaluatedAt).toBeUndefined();
    expect(record.version).toBe(7);
  });

  it('refreshes the record expiry only when half of it is used up (no write per pass just for the TTL)', () => {
    const c = cluster({ nodes: [theNode], pods: on(N, web) });
    const s1 = pass(c, emptyPassState(), T0);
    expect(s1.nodes[N]!.expiresAt).toBe(T0 + NODE_STATE_TTL_MS);
    const s2 = pass(c, s1, T0 + hours(1));
    expect(s2.nodes[N]!.expiresAt).toBe(T0 + NODE_STATE_TTL_MS);
    const late = T0 + NODE_STATE_TTL_MS / 2 + hours(1);
    expect(pass(c, s2, late).nodes[N]!.expiresAt).toBe(late + NODE_STATE_TTL_MS);
  });
});

describe('emptiness (emptiness TTL)', () => {
  it('empty since the pass that saw it empty, kept while it stays empty, cleared when a pod arrives', () => {
    let state = pass(cluster({ nodes: [theNode], pods: on(N, web) }), emptyPassState(), T0);
    const empty = cluster({ nodes: [theNode] });
    state = pass(empty, state, T0 + minutes(3));
    expect(state.nodes[N]!.emptySince).toBe(T0 + minutes(3));
    state = pass(empty, state, T0 + minutes(6));
    expect(state.nodes[N]!.emptySince).toBe(T0 + minutes(3));
    expect(emptyFor(state.nodes[N]!, T0 + minutes(6))).toBe(minutes(3));
    expect(emptyLongEnough(state.nodes[N]!, minutes(3), T0 + minutes(6))).toBe(true);
    expect(emptyLongEnough(state.nodes[N]!, minutes(5), T0 + minutes(6))).toBe(false);
    expect(emptyLongEnough(state.nodes[N]!, null, T0 + hours(6))).toBe(false);
    state = pass(cluster({ nodes: [theNode], pods: on(N, pod({ createdAt: T0 + minutes(7), startedAt: T0 + minutes(7) })) }), state, T0 + minutes(9));
    expect(state.nodes[N]!.emptySince).toBeUndefined();
    expect(emptyFor(state.nodes[N]!, T0 + minutes(9))).toBeUndefined();
  });
});

describe('isConsolidatable: now - lastPodEvent >= consolidateAfter', () => {
  const record = nodeState({ lastPodEventAt: T0 - minutes(10) });
  it.each<[string, number | null, number, boolean]>([
    ['Never', null, T0, false],
    ['0s', 0, T0, true],
    ['just reached', minutes(10), T0, true],
    ['1 ms short', minutes(10) + 1, T0, false],
    ['well past', minutes(1), T0, true],
  ])('%s', (_name, after, now, expected) => {
    expect(isConsolidatable(record, after, now)).toBe(expected);
  });

  it('an unknown last pod event is not consolidatable', () => {
    expect(isConsolidatable(nodeState({ lastPodEventAt: undefined }), 0, T0)).toBe(false);
    expect(consolidatableAt(record, minutes(5))).toBe(T0 - minutes(5));
    expect(consolidatableAt(record, null)).toBeUndefined();
  });
});

describe('consolidationGracePeriod', () => {
  const quiet = nodeState({ lastPodEventAt: T0 - hours(1) });
  const grace = hours(1);

  it.each<[string, { actedOn: boolean }, number | null, number, boolean]>([
    ['evaluated, nothing done: protected right after', { actedOn: false }, grace, T0 + 1, true],
    ['evaluated, nothing done: protected until just before the end', { actedOn: false }, grace, T0 + grace - 1, true],
    ['evaluated, nothing done: window over at now + grace', { actedOn: false }, grace, T0 + grace, false],
    ['acted on: not protected', { actedOn: true }, grace, T0 + 1, false],
    ['grace period Never / unset: not protected', { actedOn: false }, null, T0 + 1, false],
    ['grace period 0: not protected', { actedOn: false }, 0, T0, false],
  ])('%s', (_name, outcome, gracePeriod, at, expected) => {
    const evaluated = recordEvaluation(quiet, outcome, gracePeriod, T0);
    expect(evaluated.lastEvaluatedAt).toBe(T0);
    expect(evaluated.consolidatableSince).toBe(T0);
    expect(graceProtection(evaluated, gracePeriod, at).protected).toBe(expected);
  });

  it('reports when the protection ends', () => {
    const evaluated = recordEvaluation(quiet, { actedOn: false }, grace, T0);
    expect(graceProtection(evaluated, grace, T0 + minutes(1))).toEqual({ protected: true, until: T0 + grace });
  });

  it('a shorter or removed grace period takes effect at once', () => {
    const evaluated = recordEvaluation(quiet, { actedOn: false }, hours(4), T0);
    expect(graceProtection(evaluated, hours(1), T0 + hours(2)).protected).toBe(false);
    expect(graceProtection(evaluated, null, T0 + 1).protected).toBe(false);
  });

  it('protection carries across quiet passes and a pod event ends it', () => {
    const c = cluster({ nodes: [theNode], pods: on(N, web) });
    let state = pass(c, emptyPassState(), T0);
    state = { ...state, nodes: { [N]: recordEvaluation(state.nodes[N]!, { actedOn: false }, grace, T0) } };

    state = pass(c, state, T0 + minutes(3)); // quiet
    expect(state.nodes[N]!.graceProtectedUntil).toBe(T0 + grace);
    expect(graceProtection(state.nodes[N]!, grace, T0 + minutes(3)).protected).toBe(true);
    expect(state.nodes[N]!.consolidatableSince).toBe(T0);

    const arrived = pod({ createdAt: T0 + minutes(4), startedAt: T0 + minutes(4) });
    state = pass(cluster({ nodes: [theNode], pods: on(N, web, arrived) }), state, T0 + minutes(6));
    const record = state.nodes[N]!;
    expect(record.lastPodEventAt).toBe(T0 + minutes(4));
    expect(record.graceProtectedUntil).toBeUndefined();
    expect(record.consolidatableSince).toBeUndefined();
    expect(record.lastEvaluatedAt).toBe(T0); // history is kept
    expect(graceProtection(record, grace, T0 + minutes(6)).protected).toBe(false);
  });

  it('a pod leaving also ends it', () => {
    const c = cluster({ nodes: [theNode], pods: on(N, web, api) });
    let state = pass(c, emptyPassState(), T0);
    state = { ...state, nodes: { [N]: recordEvaluation(state.nodes[N]!, { actedOn: false }, grace, T0) } };
    state = pass(cluster({ nodes: [theNode], pods: on(N, web) }), state, T0 + minutes(3));
    expect(state.nodes[N]!.graceProtectedUntil).toBeUndefined();
  });
});
