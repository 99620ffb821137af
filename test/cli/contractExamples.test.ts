// The contract's worked examples through the real bin: each folder's cluster, catalog and NodePools,
// planned at a fixed time, must give what its expected.json says (test/fixtures/contract-examples/README.md
// explains the fields). The repository's own copy always runs; the team's folder beside the checkout
// (../shared/examples) runs as well when it is there, so a case added there is noticed here.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const BIN = join(import.meta.dirname, '../../bin/eks-consolidator.mjs');
const OWN = join(import.meta.dirname, '../fixtures/contract-examples');
const TEAM = join(import.meta.dirname, '../../../shared/examples');
const NOW = '2026-11-21T12:00:00Z';

interface Expected {
  readonly exit: number;
  readonly stderr?: string;
  readonly disrupted?: readonly string[];
  readonly count?: number;
  readonly actions?: readonly string[];
  readonly cheapest?: string;
  readonly blocked?: Readonly<Record<string, string | readonly string[]>>;
}

interface PlanJson {
  readonly decisions?: readonly { nodes: string[]; action: string; replacements?: { instanceTypes?: string[] }[] }[];
  readonly nodes?: readonly { name: string; reasons?: string[] }[];
}

function casesIn(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((n) => existsSync(join(dir, n, 'expected.json'))).sort() : [];
}

function plan(dir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const args = [BIN, 'plan', '--cluster', join(dir, 'cluster.json'), '--catalog', join(dir, 'catalog.json'), '--config', join(dir, 'nodepools.yaml'), '--now', NOW, '--format', 'json'];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Every way the run differs from expected.json, in words (empty: it matches). */
async function differences(dir: string): Promise<string[]> {
  const want = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Expected;
  const r = await plan(dir);
  const why: string[] = [];
  if (r.code !== want.exit) why.push(`exit ${r.code}, want ${want.exit} (stderr: ${r.stderr.trim()})`);
  if (want.stderr !== undefined && !r.stderr.includes(want.stderr)) why.push(`stderr does not mention "${want.stderr}": ${r.stderr.trim()}`);
  if (want.exit !== 0) return why;
  let result: PlanJson;
  try {
    result = JSON.parse(r.stdout) as PlanJson;
  } catch {
    return [...why, 'stdout is not a JSON plan'];
  }
  const decisions = result.decisions ?? [];
  const disrupted = [...new Set(decisions.flatMap((d) => d.nodes))].sort();
  if (want.disrupted && JSON.stringify(disrupted) !== JSON.stringify(want.disrupted)) why.push(`disrupted ${JSON.stringify(disrupted)}, want ${JSON.stringify(want.disrupted)}`);
  if (want.count !== undefined && disrupted.length !== want.count) why.push(`${disrupted.length} node(s) disrupted, want ${want.count}`);
  const actions = decisions.map((d) => d.action);
  if (want.actions && JSON.stringify(actions) !== JSON.stringify(want.actions)) why.push(`actions ${JSON.stringify(actions)}, want ${JSON.stringify(want.actions)}`);
  const cheapest = decisions[0]?.replacements?.[0]?.instanceTypes?.[0];
  if (want.cheapest !== undefined && cheapest !== want.cheapest) why.push(`cheapest replacement ${cheapest}, want ${want.cheapest}`);
  for (const [name, words] of Object.entries(want.blocked ?? {})) {
    const any = [words].flat().map((w) => w.toLowerCase());
    const reasons = (result.nodes ?? []).find((n) => n.name === name)?.reasons ?? [];
    if (!reasons.some((s) => any.some((w) => s.toLowerCase().includes(w)))) why.push(`node ${name} has no reason mentioning one of ${JSON.stringify([words].flat())}: ${JSON.stringify(reasons)}`);
  }
  return why;
}

const own = casesIn(OWN);
const team = casesIn(TEAM);

describe('the contract examples kept in test/fixtures', () => {
  it('are all there', () => {
    expect(own.length).toBeGreaterThanOrEqual(6);
  });

  it.each(own)('%s', async (name) => {
    expect(await differences(join(OWN, name))).toEqual([]);
  });
});

// Optional: the team's folder is reference material, not part of the repository; without it this
// block is skipped and says why in its name.
const teamTitle = team.length > 0 ? 'the team contract examples in ../shared/examples' : 'the team contract examples: skipped, no ../shared/examples beside the checkout';
describe.skipIf(team.length === 0)(teamTitle, () => {
  it.each(team)('%s', async (name) => {
    expect(await differences(join(TEAM, name))).toEqual([]);
  });

  it('are all kept in test/fixtures/contract-examples too', () => {
    expect(team.filter((n) => !own.includes(n))).toEqual([]);
  });
});
