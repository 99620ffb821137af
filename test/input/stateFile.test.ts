// The `--state` file read as input: members of the wrong shape, stored times that must lie in the past
// but lie far ahead of the pass, impossible dates, and times meant to lie ahead (still accepted).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStateStore } from '../../src/adapters/state/fileStateStore.ts';
import { CLOCK_SKEW_ALLOWANCE_MS } from '../../src/adapters/state/recordCodec.ts';
import { inputErrorOfAsync } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'ekc-state-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NOW = '2026-11-21T12:00:00.000Z';
const NOW_MS = Date.parse(NOW);
const at = (ms: number) => new Date(ms).toISOString();
const HOUR_MS = 3_600_000;

type Json = Record<string, unknown>;

/** A state file as a pass at NOW writes it, with one node and one command. */
function validState(): Json {
  return {
    format: 'eks-consolidator/state',
    version: 1,
    cluster: { lastActionAt: at(NOW_MS - HOUR_MS), lastSearchAt: NOW, version: 3 },
    nodes: {
      a: {
        name: 'a',
        nodeCreatedAt: '2026-11-20T12:00:00.000Z',
        podSetFingerprint: 'f',
        podCount: 0,
        lastPodEventAt: '2026-11-21T09:00:00.000Z',
        emptySince: '2026-11-21T09:00:00.000Z',
        consolidatableSince: NOW,
        graceProtectedUntil: at(NOW_MS + 24 * HOUR_MS),
        lastEvaluatedAt: NOW,
        version: 2,
        expiresAt: at(NOW_MS + 7 * 24 * HOUR_MS),
      },
    },
    commands: [
      { id: 'c1', createdAt: NOW, nodes: ['a'], method: 'emptiness', reason: 'Empty', step: 'tainted', updatedAt: NOW, version: 1 },
    ],
    lease: { until: at(NOW_MS + 10 * 60_000), token: 7 },
  };
}

let count = 0;
function stateFile(edit: (state: Json & { nodes: Record<string, Json>; cluster: Json; commands: Json[]; lease: Json }) => void): string {
  const state = validState();
  edit(state as never);
  const path = join(dir, `state-${count++}.json`);
  // JSON.stringify cannot write a number too large for a double: a marker stands in for one.
  writeFileSync(path, JSON.stringify(state).replaceAll('"1e400"', '1e400'));
  return path;
}

/** The CLI's store: it knows the pass time. */
const store = (path: string) => new FileStateStore(path, { passTimeMs: NOW_MS });

describe('state file members and times', () => {
  it('a valid file reads, times meant to lie ahead included', async () => {
    const state = await store(stateFile(() => undefined)).load(NOW_MS);
    expect(state.nodes['a']?.graceProtectedUntil).toBe(NOW_MS + 24 * HOUR_MS);
  });

  it.each([
    ['nodes: null', (s: Json) => (s['nodes'] = null), 'nodes', 'not an object (null): give an object or leave it out'],
    ['cluster: null', (s: Json) => (s['cluster'] = null), 'cluster', 'not an object (null)'],
    ['commands: null', (s: Json) => (s['commands'] = null), 'commands', 'not a list (null): give a list or leave it out'],
    ['lease: null', (s: Json) => (s['lease'] = null), 'lease', 'not an object (null)'],
    ['nodes as a list', (s: Json) => (s['nodes'] = []), 'nodes', 'not an object'],
    ['a negative lease token', (s: Json) => ((s['lease'] as Json)['token'] = -1), 'lease.token', 'not a non-negative integer'],
    ['a fractional lease token', (s: Json) => ((s['lease'] as Json)['token'] = 1.5), 'lease.token', 'not a non-negative integer'],
    ['a version too large to represent', (s: Json) => ((s['cluster'] as Json)['version'] = '1e400'), 'cluster.version', 'a number too large to represent'],
    ['a pod event in 8999', (s: Json & { nodes: Record<string, Json> }) => (s.nodes['a']!['lastPodEventAt'] = '8999-01-01T00:00:00.000Z'), 'nodes.a.lastPodEventAt', '"8999-01-01T00:00:00.000Z" is later than the pass time 2026-11-21T12:00:00.000Z by more than the 1h allowed'],
    ['a node created tomorrow', (s: Json & { nodes: Record<string, Json> }) => (s.nodes['a']!['nodeCreatedAt'] = '2026-11-22T12:00:00.000Z'), 'nodes.a.nodeCreatedAt', 'later than the pass time'],
    ['empty since tomorrow', (s: Json & { nodes: Record<string, Json> }) => (s.nodes['a']!['emptySince'] = '2026-11-22T12:00:00.000Z'), 'nodes.a.emptySince', 'later than the pass time'],
    ['consolidatable since tomorrow', (s: Json & { nodes: Record<string, Json> }) => (s.nodes['a']!['consolidatableSince'] = '2026-11-22T12:00:00.000Z'), 'nodes.a.consolidatableSince', 'later than the pass time'],
    ['evaluated tomorrow', (s: Json & { nodes: Record<string, Json> }) => (s.nodes['a']!['lastEvaluatedAt'] = '2026-11-22T12:00:00.000Z'), 'nodes.a.lastEvaluatedAt', 'later than the pass time'],
    ['an action tomorrow', (s: Json & { cluster: Json }) => (s.cluster['lastActionAt'] = '2026-11-22T12:00:00.000Z'), 'cluster.lastActionAt', 'later than the pass time'],
    ['a search tomorrow', (s: Json & { cluster: Json }) => (s.cluster['lastSearchAt'] = '2026-11-22T12:00:00.000Z'), 'cluster.lastSearchAt', 'later than the pass time'],
    ['a command created tomorrow', (s: Json & { commands: Json[] }) => (s.commands[0]!['createdAt'] = '2026-11-22T12:00:00.000Z'), 'commands[0].createdAt', 'later than the pass time'],
    ['a pod event one millisecond past the allowance', (s: Json & { nodes: Record<string, Json> }) => (s.nodes['a']!['lastPodEventAt'] = at(NOW_MS + CLOCK_SKEW_ALLOWANCE_MS + 1)), 'nodes.a.lastPodEventAt', 'later than the pass time'],
    ['February 30th', (s: Json & { nodes: Record<string, Json> }) => (s.nodes['a']!['lastPodEventAt'] = '2026-02-30T00:00:00.000Z'), 'nodes.a.lastPodEventAt', 'not a timestamp'],
    ['a time without an offset', (s: Json & { nodes: Record<string, Json> }) => (s.nodes['a']!['lastPodEventAt'] = '2026-11-21T09:00:00'), 'nodes.a.lastPodEventAt', 'not a timestamp'],
  ])('%s is refused, naming the field', async (_case, edit, field, problem) => {
    const path = stateFile(edit as never);
    const error = await inputErrorOfAsync(() => store(path).load(NOW_MS));
    expect({ file: error.file, field: error.field }).toEqual({ file: path, field });
    expect(error.problem).toContain(problem);
  });

  it.each([
    ['a pod event as far ahead as the allowance', (s: Json & { nodes: Record<string, Json> }) => (s.nodes['a']!['lastPodEventAt'] = at(NOW_MS + CLOCK_SKEW_ALLOWANCE_MS))],
    ['grace protection until 8999', (s: Json & { nodes: Record<string, Json> }) => (s.nodes['a']!['graceProtectedUntil'] = '8999-01-01T00:00:00.000Z')],
    ['expiry in 8999', (s: Json & { nodes: Record<string, Json> }) => (s.nodes['a']!['expiresAt'] = '8999-01-01T00:00:00.000Z')],
    ['a lease until 8999', (s: Json & { lease: Json }) => (s.lease['until'] = '8999-01-01T00:00:00.000Z')],
    ['a lease token of 0', (s: Json & { lease: Json }) => (s.lease['token'] = 0)],
  ])('%s is accepted', async (_case, edit) => {
    await expect(store(stateFile(edit as never)).load(NOW_MS)).resolves.toBeDefined();
  });

  it('without a pass time (the Lambda, replays) stored times are not bounded', async () => {
    const path = stateFile((s) => (s.nodes['a']!['lastPodEventAt'] = '8999-01-01T00:00:00.000Z'));
    expect((await new FileStateStore(path).load(NOW_MS)).nodes['a']?.lastPodEventAt).toBe(Date.parse('8999-01-01T00:00:00.000Z'));
  });

  it('the first read (taking the lease) already refuses, so nothing is written', async () => {
    const path = stateFile((s) => (s.nodes['a']!['lastPodEventAt'] = '8999-01-01T00:00:00.000Z'));
    const error = await inputErrorOfAsync(() => store(path).acquireLease('cli-1@elsewhere', Date.now(), 60_000));
    expect(error.field).toBe('nodes.a.lastPodEventAt');
  });

  it('an empty path is refused at once', () => {
    expect(() => new FileStateStore('')).toThrow('the state file path is empty');
  });
});
