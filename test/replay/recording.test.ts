// A directory of timestamped dumps as the replay's workload (docs/replay.md, "The command").
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { orderDumps, recordedEvents, timeFromFileName } from '../../src/core/replay/recording.ts';
import { cluster, minutes, node, on, pod, T0 } from '../builders.ts';

describe('timeFromFileName', () => {
  it.each([
    ['2026-11-21T12:00:00Z.json', '2026-11-21T12:00:00Z'],
    ['dump-2026-11-21T12-30-00Z.json', '2026-11-21T12:30:00Z'],
    ['20261121T130000Z.yaml', '2026-11-21T13:00:00Z'],
    ['2026-11-21T14-00-00+01:00.json', '2026-11-21T13:00:00Z'],
  ])('reads %s', (name, expected) => {
    expect(timeFromFileName(name)).toBe(Date.parse(expected));
  });

  it('says so when the name has no time', () => {
    expect(timeFromFileName('cluster.json')).toBeUndefined();
  });
});

describe('recordedEvents', () => {
  const a = node({ name: 'a' });
  const web1 = pod({ name: 'web-1' });
  const web2 = pod({ name: 'web-2' });
  const job = pod({ name: 'job-1', createdAt: T0 + minutes(12) });

  it('finds arrivals (at their creation time when it is between the dumps) and departures (at the later dump)', () => {
    const dumps = orderDumps([
      { file: 'b.json', atMs: T0 + minutes(30), cluster: cluster({ nodes: [a], pods: on('a', web2, job) }) },
      { file: 'a.json', atMs: T0, cluster: cluster({ nodes: [a], pods: on('a', web1, web2) }) },
      { file: 'c.json', atMs: T0 + minutes(60), cluster: cluster({ nodes: [a], pods: on('a', web2, { ...job, phase: 'Succeeded' }) }) },
    ]);
    expect(recordedEvents(dumps).map((e) => [e.kind, e.key, (e.atMs - T0) / 60_000])).toEqual([
      ['arrive', 'default/job-1', 12],
      ['leave', 'default/web-1', 30],
      ['leave', 'default/job-1', 60],
    ]);
  });

  it('refuses two dumps of the same time, naming the file', () => {
    const same = { atMs: T0, cluster: cluster() };
    expect(() => orderDumps([{ ...same, file: 'x.json' }, { ...same, file: 'y.json' }])).toThrow('y.json');
  });
});

describe('eks-consolidator replay --cluster DIR', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ekc-recording-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const SEED = join(import.meta.dirname, '../../demo/replay-seed-003');
  const BIN = join(import.meta.dirname, '../../bin/eks-consolidator.mjs');

  it('replays the recorded arrivals and departures to the last dump', () => {
    // Three dumps, 30 minutes apart: the demo/replay-seed-003 cluster, then 10 of its 30 service pods gone, then
    // 4 new pods of 1 cpu each (more than the nodes have free: they need a new node).
    const first = JSON.parse(readFileSync(join(SEED, 'cluster.json'), 'utf8'));
    const services = first.items.filter((i: { kind: string; metadata: { namespace?: string } }) => i.kind === 'Pod' && i.metadata.namespace === 'shop');
    const gone = new Set(services.slice(0, 10).map((p: { metadata: { name: string } }) => p.metadata.name));
    const second = { ...first, items: first.items.filter((i: { metadata: { name: string } }) => !gone.has(i.metadata.name)) };
    const newPods = [0, 1, 2, 3].map((k) => ({
      ...services[10],
      metadata: { ...services[10].metadata, name: `batch-${k}`, uid: `uid-batch-${k}`, creationTimestamp: '2026-11-21T12:45:00Z' },
      spec: { ...services[10].spec, nodeName: 'ip-10-0-1-10.ec2.internal', containers: [{ name: 'main', image: 'x', resources: { requests: { cpu: '1', memory: '1Gi' } } }] },
    }));
    const third = { ...second, items: [...second.items, ...newPods] };
    const recording = join(dir, 'recording');
    mkdirSync(recording);
    writeFileSync(join(recording, '2026-11-21T12-00-00Z.json'), JSON.stringify(first));
    writeFileSync(join(recording, '2026-11-21T12-30-00Z.json'), JSON.stringify(second));
    writeFileSync(join(recording, '2026-11-21T13-00-00Z.json'), JSON.stringify(third));
    writeFileSync(join(recording, 'README.txt'), 'not a dump');

    const r = spawnSync(process.execPath, [BIN, 'replay', '--cluster', recording, '--catalog', join(SEED, 'catalog.json'), '--config', join(SEED, 'threshold-1.yaml')], { encoding: 'utf8', timeout: 120_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ source: 'recording', startedAt: '2026-11-21T12:00:00Z', endedAt: '2026-11-21T13:00:00Z', passes: 12 });
    const passes = report.configs[0].passes;
    // The 4 big pods arrive at 12:45 and fit on no node: new capacity is launched for them.
    expect(report.configs[0].summary.nodesLaunchedForPending).toBeGreaterThan(0);
    expect(report.configs[0].summary.pendingPodMinutes).toBeGreaterThan(0);
    const at = (time: string) => passes.find((p: { at: string }) => p.at === `2026-11-21T${time}:00Z`);
    expect([at('12:00').pods, at('12:25').pods, at('12:30').pods, at('12:40').pods, at('12:50').pods]).toEqual([30, 30, 20, 20, 24]);
    expect(at('12:50').pendingPods).toBe(0);
  });

  it('refuses a dump without a time in its name, and --churn with a recording', () => {
    const bad = join(dir, 'bad');
    mkdirSync(bad);
    writeFileSync(join(bad, 'cluster.json'), readFileSync(join(SEED, 'cluster.json')));
    const noTime = spawnSync(process.execPath, [BIN, 'replay', '--cluster', bad, '--catalog', join(SEED, 'catalog.json')], { encoding: 'utf8', timeout: 60_000 });
    expect(noTime.status).toBe(2);
    expect(noTime.stderr).toContain('cluster.json: a dump of a recording needs its time in its file name');
    const recording = join(dir, 'recording');
    const churn = spawnSync(process.execPath, [BIN, 'replay', '--cluster', recording, '--catalog', join(SEED, 'catalog.json'), '--churn', 'daily=0.5'], { encoding: 'utf8', timeout: 60_000 });
    expect(churn.status).toBe(2);
    expect(churn.stderr).toContain('--churn');
  });
});
