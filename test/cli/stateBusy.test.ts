// `plan --state` while another run holds the state file: never an empty plan printed as a success; a
// lease or lock left by a killed run of this machine (and PID namespace) does not block the next run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localProcessId } from '../../src/adapters/state/fileStateStore.ts';

const BIN = join(import.meta.dirname, '../../bin/eks-consolidator.mjs');
const E = join(import.meta.dirname, '../fixtures/contract-examples/empty-node-is-deleted');

function plan(state: string) {
  const r = spawnSync(
    process.execPath,
    [BIN, 'plan', '--cluster', join(E, 'cluster.json'), '--catalog', join(E, 'catalog.json'), '--config', join(E, 'nodepools.yaml'), '--now', '2026-11-21T12:00:00Z', '--state', state],
    { encoding: 'utf8', env: { ...process.env, EKS_CONSOLIDATOR_STATE_WAIT_MS: '300' }, timeout: 60_000 },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function stateWithLease(owner: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'ekc-busy-')), 'state.json');
  const until = new Date(Date.now() + 3_600_000).toISOString();
  writeFileSync(path, JSON.stringify({ format: 'eks-consolidator/state', version: 1, cluster: { version: 0 }, nodes: {}, commands: [], lease: { owner, until, token: 4 } }));
  return path;
}

/** A pid of this machine that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

describe('a state file in use', () => {
  it('held by a live run: exit 3 with a message, nothing printed or written', () => {
    const path = stateWithLease('cli-1@some-other-machine');
    const before = readFileSync(path, 'utf8');
    const r = plan(path);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/another run is using this state file \(cli-1@some-other-machine, until /);
    expect(readFileSync(path, 'utf8')).toBe(before);
  });

  it('held by a run of this machine that was killed: taken over, the plan is printed', () => {
    const path = stateWithLease(`cli-${localProcessId(deadPid())}`);
    const r = plan(path);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).decisions.length).toBeGreaterThan(0);
    // The lease was released again, and its fencing token went on growing.
    const lease = JSON.parse(readFileSync(path, 'utf8')).lease;
    expect(lease.owner).toBeUndefined();
    expect(lease.token).toBe(5);
  });

  it('a lock file left by a killed run of this machine is broken at once', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ekc-lock-')), 'state.json');
    writeFileSync(`${path}.lock`, `${localProcessId(deadPid())}\n`);
    const r = plan(path);
    expect(r.code, r.stderr).toBe(0);
  });

  // Containers that share a host name but not a PID namespace: a process id missing here may be
  // running in the other one, so its lease is left to run out.
  it.each([
    ['of another PID namespace on a host of the same name', () => `cli-${deadPid()}@${hostname()}#pidns=1`],
    ['written before owners named their PID namespace', () => `cli-${deadPid()}@${hostname()}`],
  ])('held by a run %s: not taken for dead (exit 3, nothing written)', (_case, owner) => {
    const path = stateWithLease(owner());
    const before = readFileSync(path, 'utf8');
    const r = plan(path);
    expect(r.code, r.stderr).toBe(3);
    expect(readFileSync(path, 'utf8')).toBe(before);
  });
});
