// The CLI's `--state FILE` (docs/file-formats.md, "The state file"): round trip, atomic writes, bad
// files as InputErrors, versions, lease and commands, and consecutive passes through the file.
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileStateStore, STATE_FILE_FORMAT, STATE_FILE_VERSION } from '../../src/adapters/state/fileStateStore.ts';
import { InputError } from '../../src/core/errors.ts';
import { StateConflictError } from '../../src/core/state/errors.ts';
import { observeNodes, recordEvaluation } from '../../src/core/state/observe.ts';
import { emptyPassState, type DisruptionCommand, type PassState } from '../../src/core/state/types.ts';
import { cluster, hours, minutes, node, nodeState, on, pod, T0 } from '../builders.ts';
import type { Pod } from '../../src/core/model/types.ts';

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'state-test-'));
  file = join(dir, 'state.json');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sample = (): PassState => ({
  nodes: {
    'ip-10-0-1-7.ec2.internal': nodeState({
      name: 'ip-10-0-1-7.ec2.internal',
      nodeCreatedAt: T0 - hours(24),
      podCount: 0,
      lastPodEventAt: T0 - minutes(30),
      emptySince: T0 - minutes(30),
      consolidatableSince: T0 - minutes(20),
      graceProtectedUntil: T0 + minutes(40),
      lastEvaluatedAt: T0 - minutes(20),
      version: 0,
    }),
    b: nodeState({ name: 'b', version: 0 }),
  },
  cluster: { lastActionAt: T0 - hours(1), lastFingerprint: 'abc', lastPassFoundNothing: true, lastSearchAt: T0 - minutes(3), version: 0 },
  commands: [],
});

const command = (overrides: Partial<DisruptionCommand> = {}): DisruptionCommand => ({
  id: 'cmd-1',
  createdAt: T0,
  nodes: ['a'],
  method: 'single-node',
  reason: 'Underutilized',
  replacements: [{ instanceTypes: ['m5.large', 'm5.xlarge'], capacityType: 'on-demand', zones: ['us-east-1a'], pricePerHour: 0.096 }],
  step: 'tainted',
  updatedAt: T0,
  version: 0,
  ...overrides,
});

describe('FileStateStore', () => {
  it('a missing file is an empty state', async () => {
    expect(await new FileStateStore(file).load(T0)).toEqual(emptyPassState());
  });

  it('a zero-length file is an empty state too', async () => {
    await writeFile(file, '');
    expect(await new FileStateStore(file).load(T0)).toEqual(emptyPassState());
  });

  it('round-trips every field, versions one up', async () => {
    const store = new FileStateStore(file);
    const previous = await store.load(T0);
    const saved = await store.save(sample(), previous, T0);
    const loaded = await new FileStateStore(file).load(T0);
    expect(loaded).toEqual(saved);
    expect(loaded.nodes.b!.version).toBe(1);
    expect(loaded.cluster).toEqual({ ...sample().cluster, version: 1 });
  });

  it('writes a readable file: format, version, ISO times', async () => {
    const store = new FileStateStore(file);
    await store.save(sample(), await store.load(T0), T0);
    const json = JSON.parse(await readFile(file, 'utf8'));
    expect(json.format).toBe(STATE_FILE_FORMAT);
    expect(json.version).toBe(STATE_FILE_VERSION);
    expect(json.nodes['ip-10-0-1-7.ec2.internal'].lastPodEventAt).toBe('2026-11-21T11:30:00.000Z');
  });

  it('writes atomically and leaves no temp or lock files behind', async () => {
    const store = new FileStateStore(file);
    let state = await store.load(T0);
    for (let i = 0; i < 5; i++) {
      const next: PassState = { ...state, cluster: { ...state.cluster, lastSearchAt: T0 + i } };
      state = await store.save(next, state, T0 + i);
    }
    expect(await readdir(dir)).toEqual(['state.json']);
    expect((await store.load(T0)).cluster.version).toBe(5);
  });

  it.each<[string, string, RegExp]>([
    ['not JSON', '{ "format": ', /state\.json: not valid JSON/],
    ['not an object', '[1, 2]', /state\.json: not an object/],
    ['someone else\'s JSON', '{ "hello": "world" }', /state\.json: format: missing/],
    ['a newer layout', JSON.stringify({ format: STATE_FILE_FORMAT, version: 99 }), /state\.json: version: unsupported state file version 99/],
    [
      'a bad timestamp',
      JSON.stringify({ format: STATE_FILE_FORMAT, version: 1, nodes: { x: { name: 'x', podSetFingerprint: 'f', podCount: 0, lastPodEventAt: 'yesterday', version: 1, expiresAt: '2026-12-01T00:00:00Z' } } }),
      /state\.json: nodes\.x\.lastPodEventAt: not a timestamp/,
    ],
    [
      'a record under the wrong key',
      JSON.stringify({ format: STATE_FILE_FORMAT, version: 1, nodes: { x: { name: 'y', podSetFingerprint: 'f', podCount: 0, version: 1, expiresAt: '2026-12-01T00:00:00Z' } } }),
      /nodes\.x\.name: "y" does not match its key/,
    ],
    ['a bad version', JSON.stringify({ format: STATE_FILE_FORMAT, version: 1, cluster: { version: -1 } }), /cluster\.version: not a non-negative integer/],
    [
      'a bad command step',
      JSON.stringify({ format: STATE_FILE_FORMAT, version: 1, commands: [{ ...command(), step: 'flying', createdAt: 0, updatedAt: 0 }] }),
      /commands\[0\]\.step: not one of/,
    ],
  ])('a corrupt file (%s) is an InputError naming the file and the field, and is left alone', async (_name, text, message) => {
    await writeFile(file, text);
    const error = await new FileStateStore(file).load(T0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).file).toBe(file);
    expect((error as Error).message).toMatch(message);
    // Never silently reset: saving over it fails the same way and the file is unchanged.
    await expect(new FileStateStore(file).save(sample(), emptyPassState(), T0)).rejects.toBeInstanceOf(InputError);
    expect(await readFile(file, 'utf8')).toBe(text);
  });

  it('a state file in a directory that does not exist is an InputError', async () => {
    const missing = join(dir, 'nope', 'state.json');
    await expect(new FileStateStore(missing).load(T0)).rejects.toThrow(/nope\/state\.json: directory .* does not exist/);
  });

  it('a write based on a stale read is a conflict; the other records are still written', async () => {
    const one = new FileStateStore(file);
    const two = new FileStateStore(file);
    const base = await one.save(sample(), emptyPassState(), T0);
    const readByOne = await one.load(T0);
    const readByTwo = await two.load(T0);
    const b = readByOne.nodes.b!;
    await one.save({ ...readByOne, nodes: { ...readByOne.nodes, b: { ...b, lastEvaluatedAt: T0 } } }, readByOne, T0);
    const byTwo: PassState = {
      ...readByTwo,
      nodes: { ...readByTwo.nodes, b: { ...b, lastEvaluatedAt: T0 + 1 }, c: nodeState({ name: 'c', version: 0 }) },
    };
    const error = await two.save(byTwo, readByTwo, T0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateConflictError);
    expect((error as StateConflictError).records).toEqual(['node b']);
    const after = await one.load(T0);
    expect(after.nodes.b!.lastEvaluatedAt).toBe(T0); // one's write survived
    expect(after.nodes.c).toBeDefined(); // two's independent record was written
    expect(base.nodes.b!.version).toBe(1);
  });

  it('ignores expired records at the pass time, and a new record may replace an expired one', async () => {
    const store = new FileStateStore(file);
    await store.save({ ...emptyPassState(), nodes: { old: nodeState({ name: 'old', version: 0, expiresAt: T0 + 1000 }) } }, emptyPassState(), T0);
    expect(Object.keys((await store.load(T0)).nodes)).toEqual(['old']);
    const later = await store.load(T0 + 1000);
    expect(later.nodes).toEqual({});
    await store.save({ ...later, nodes: { old: nodeState({ name: 'old', version: 0, expiresAt: T0 + hours(1) }) } }, later, T0 + 1000);
    expect((await store.load(T0 + 1000)).nodes.old!.version).toBe(1);
  });

  it('waits for another process\'s lock, and breaks a lock left by a dead one', async () => {
    const lock = `${file}.lock`;
    await writeFile(lock, '12345\n');
    const impatient = new FileStateStore(file, { lockTimeoutMs: 100, staleLockMs: 60_000 });
    await expect(impatient.acquireLease('a', T0, 1000)).rejects.toThrow(/locked by another process/);
    const old = new Date(Date.now() - 120_000);
    await utimes(lock, old, old);
    expect(await impatient.acquireLease('a', T0, 1000)).toBe(true);
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('lease: one owner at a time, taken over when expired, released by its owner only', async () => {
    const store = new FileStateStore(file);
    expect(await store.acquireLease('pass-a', T0, minutes(5))).toBe(true);
    expect(await store.acquireLease('pass-a', T0 + 1, minutes(5))).toBe(true); // already ours
    expect(await store.acquireLease('pass-b', T0 + minutes(1), minutes(5))).toBe(false);
    expect(await store.renewLease('pass-b', T0 + minutes(1), minutes(5))).toBe(false);
    expect(await store.renewLease('pass-a', T0 + minutes(1), minutes(5))).toBe(true);
    expect(await store.readLease()).toEqual({ owner: 'pass-a', until: T0 + minutes(6) });
    expect(await store.acquireLease('pass-b', T0 + minutes(6), minutes(5))).toBe(true); // expired
    expect(await store.renewLease('pass-a', T0 + minutes(7), minutes(5))).toBe(false);
    await store.releaseLease('pass-a'); // not ours any more: no effect
    expect((await store.readLease())?.owner).toBe('pass-b');
    await store.releaseLease('pass-b');
    expect(await store.readLease()).toBeUndefined();
    // The lease lives in the same file and survives state saves.
    await store.acquireLease('pass-c', T0, minutes(5));
    await store.save(sample(), await store.load(T0), T0);
    expect((await store.readLease())?.owner).toBe('pass-c');
  });

  it('commands: create, update on the version read, conflict on a stale one', async () => {
    const store = new FileStateStore(file);
    const created = await store.putCommand(command());
    expect(created.version).toBe(1);
    await expect(store.putCommand(command())).rejects.toBeInstanceOf(StateConflictError);
    const launched = await store.putCommand({ ...created, step: 'launched', launched: [{ index: 0, ref: 'i-123', instanceId: 'i-123' }], updatedAt: T0 + 1 }, created.version);
    expect(launched.version).toBe(2);
    await expect(store.putCommand({ ...created, step: 'rolledBack' }, created.version)).rejects.toThrow(/command cmd-1/);
    await store.putCommand(command({ id: 'cmd-0', createdAt: T0 - 1 }));
    const listed = await store.listCommands(T0);
    expect(listed.map((c) => [c.id, c.step, c.version])).toEqual([
      ['cmd-0', 'tainted', 1],
      ['cmd-1', 'launched', 2],
    ]);
    expect((await store.load(T0)).commands).toEqual(listed);
  });

  it('finished commands age out', async () => {
    const store = new FileStateStore(file);
    await store.putCommand(command({ step: 'done', updatedAt: T0 }));
    expect(await store.listCommands(T0 + hours(24))).toHaveLength(1);
    expect(await store.listCommands(T0 + hours(24 * 8))).toHaveLength(0);
  });

  it('consecutive passes through the file remember a pod leaving and the grace period', async () => {
    const n = node({ name: 'n1' });
    const [web, api] = on('n1', pod({ name: 'web' }), pod({ name: 'api' }));
    const runPass = async (pods: Pod[], now: number, evaluate: boolean): Promise<PassState> => {
      const store = new FileStateStore(file); // a fresh process each time, as with the CLI
      const previous = await store.load(now);
      let nodes = observeNodes(cluster({ nodes: [n], pods }), previous, now);
      if (evaluate) nodes = { ...nodes, n1: recordEvaluation(nodes.n1!, { actedOn: false }, hours(1), now) };
      return store.save({ ...previous, nodes }, previous, now);
    };
    await runPass([web!, api!], T0, true);
    let s = await runPass([web!, api!], T0 + minutes(3), false);
    expect(s.nodes.n1!.graceProtectedUntil).toBe(T0 + hours(1));
    s = await runPass([web!], T0 + minutes(6), false);
    expect(s.nodes.n1!.lastPodEventAt).toBe(T0 + minutes(6));
    expect(s.nodes.n1!.graceProtectedUntil).toBeUndefined();
    s = await runPass([web!], T0 + minutes(9), false);
    expect(s.nodes.n1!.lastPodEventAt).toBe(T0 + minutes(6));
  });
});
