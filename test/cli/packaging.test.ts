// The CLI as a user installs it: `npm pack` (which builds dist/ first), the tarball installed into an
// empty global prefix, and the installed command run from a folder that is not the checkout. Proves
// the tarball holds everything the CLI reads (the bundle, the bundled catalog, the demo), nothing of
// the tests, and runs without the development tools (tsx, esbuild).
//
// Dependencies come from npm's cache when it has them (--prefer-offline), else from the registry.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

// npm's own variables from an enclosing `npm test` (the package's, the lifecycle's, its prefixes) would
// describe the checkout to the npm runs below; the rest (registry, cache, user config) is kept.
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    const lower = key.toLowerCase();
    if (lower.startsWith('npm_package_') || lower.startsWith('npm_lifecycle_') || lower === 'init_cwd') continue;
    if (['npm_config_prefix', 'npm_config_global_prefix', 'npm_config_local_prefix', 'npm_config_global'].includes(lower)) continue;
    env[key] = value;
  }
  // The installed bin starts with `#!/usr/bin/env node`: this Node first on the PATH.
  env['PATH'] = `${dirname(process.execPath)}${delimiter}${env['PATH'] ?? ''}`;
  return env;
}

function run(command: string, args: readonly string[], cwd: string, timeoutMs: number): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, env: cleanEnv(), encoding: 'utf8', timeout: timeoutMs, maxBuffer: 1 << 26 });
}

const explain = (r: SpawnSyncReturns<string>) => `exit ${r.status}${r.error ? ` (${r.error.message})` : ''}\n${r.stderr.slice(-3000)}`;

describe('the packed CLI, installed outside the checkout', () => {
  let dir: string;
  let packed: { filename: string; files: { path: string }[] };
  let prefix: string;
  let installed: string;
  let elsewhere: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ekc-packaging-'));
    const pack = run('npm', ['pack', '--json', '--pack-destination', dir], ROOT, 180_000);
    if (pack.status !== 0) throw new Error(`npm pack failed: ${explain(pack)}`);
    // The lifecycle scripts' output may come before the JSON.
    packed = (JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as (typeof packed)[])[0]!;
    prefix = join(dir, 'prefix');
    const install = run(
      'npm',
      ['install', '--global', '--prefix', prefix, join(dir, packed.filename), '--prefer-offline', '--no-audit', '--no-fund', '--loglevel', 'error'],
      dir,
      240_000,
    );
    if (install.status !== 0) throw new Error(`npm install of the tarball failed: ${explain(install)}`);
    installed = join(prefix, 'lib', 'node_modules', pkg.name);
    elsewhere = join(dir, 'elsewhere');
    mkdirSync(elsewhere);
  }, 420_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the tarball holds the bin, the bundle, the bundled catalog and the demo', () => {
    const paths = packed.files.map((f) => f.path);
    for (const needed of ['package.json', 'bin/eks-consolidator.mjs', 'dist/eks-consolidator.mjs', 'src/adapters/catalog/bundled/catalog.json', 'demo/cluster.json', 'demo/nodepools.yaml']) {
      expect(paths, needed).toContain(needed);
    }
  });

  it('and nothing of the tests, the TypeScript source or the build scripts', () => {
    const paths = packed.files.map((f) => f.path);
    expect(paths.filter((p) => p.startsWith('test/') || p.startsWith('scripts/') || p.startsWith('bench/') || p.endsWith('.ts'))).toEqual([]);
    expect(paths.filter((p) => p.startsWith('src/') && p !== 'src/adapters/catalog/bundled/catalog.json')).toEqual([]);
  });

  it('installs without the development tools: tsx and esbuild are not dependencies', () => {
    expect(Object.keys(pkg.dependencies)).not.toContain('tsx');
    expect(Object.keys(pkg.dependencies)).not.toContain('esbuild');
    expect(existsSync(join(installed, 'package.json'))).toBe(true);
    for (const tool of ['tsx', 'esbuild']) {
      expect(existsSync(join(installed, 'node_modules', tool)), tool).toBe(false);
      expect(existsSync(join(prefix, 'lib', 'node_modules', tool)), tool).toBe(false);
    }
  });

  it('the installed command prints its version', () => {
    const r = run(join(prefix, 'bin', 'eks-consolidator'), ['--version'], elsewhere, 60_000);
    expect(r.status, explain(r)).toBe(0);
    expect(r.stdout).toBe(`eks-consolidator ${pkg.version}\n`);
  });

  it('plans the demo cluster from another folder with the bundled catalog', () => {
    const r = run(join(prefix, 'bin', 'eks-consolidator'), ['plan', '--format', 'json'], elsewhere, 120_000);
    expect(r.status, explain(r)).toBe(0);
    const plan = JSON.parse(r.stdout) as { decisions: { action: string; nodes: string[] }[]; nodes: { name: string }[] };
    const demo = JSON.parse(readFileSync(join(ROOT, 'demo/cluster.json'), 'utf8')) as { items: { kind: string; metadata: { name: string } }[] };
    const demoNodes = new Set(demo.items.filter((i) => i.kind === 'Node').map((i) => i.metadata.name));
    // The demo's nodes, most of them in its NodePools, are reported; its idle nodes give decisions.
    expect(plan.nodes.length).toBeGreaterThan(demoNodes.size / 2);
    expect(plan.nodes.filter((n) => !demoNodes.has(n.name))).toEqual([]);
    expect(plan.decisions.length).toBeGreaterThan(0);
    for (const d of plan.decisions) {
      expect(['delete', 'replace']).toContain(d.action);
      expect(d.nodes.filter((name) => !demoNodes.has(name))).toEqual([]);
    }
  });

  it('plans a cluster given on standard input, as a table', () => {
    const r = spawnSync(join(prefix, 'bin', 'eks-consolidator'), ['plan', '-', '--format', 'table', '--now', '2026-11-21T12:00:00Z'], {
      cwd: elsewhere,
      env: cleanEnv(),
      encoding: 'utf8',
      timeout: 120_000,
      input: readFileSync(join(ROOT, 'demo/cluster.json')),
    });
    expect(r.status, explain(r)).toBe(0);
    expect(r.stdout).toMatch(/SUMMARY/);
  });
});

describe('the bin in a checkout whose bundle cannot run', () => {
  // A checkout in miniature: the bin, package.json and a source entry, but no dist/ and no
  // node_modules, so neither the bundle nor tsx (a development dependency) is there.
  function checkout(withSource: boolean): string {
    const dir = mkdtempSync(join(tmpdir(), 'ekc-bin-'));
    mkdirSync(join(dir, 'bin'));
    copyFileSync(join(ROOT, 'bin/eks-consolidator.mjs'), join(dir, 'bin/eks-consolidator.mjs'));
    copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
    if (withSource) {
      mkdirSync(join(dir, 'src/cli'), { recursive: true });
      writeFileSync(join(dir, 'src/cli/run.ts'), 'export {};\n');
    }
    return dir;
  }
  const bin = (dir: string, args: readonly string[]) =>
    spawnSync(process.execPath, [join(dir, 'bin/eks-consolidator.mjs'), ...args], { cwd: dir, encoding: 'utf8', timeout: 60_000 });

  it.each([
    ['the source without the bundle or tsx: build it', true, /tsx \(a development dependency.*\) is not installed[\s\S]*npm run prepare/],
    ['neither the source nor the bundle: reinstall', false, /dist\/eks-consolidator\.mjs is missing; this copy is incomplete/],
  ])('%s', (_name, withSource, message) => {
    const dir = checkout(withSource);
    try {
      const r = bin(dir, ['plan']);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(message);
      // --version needs only package.json.
      const v = bin(dir, ['--version']);
      expect(v.status).toBe(0);
      expect(v.stdout).toBe(`eks-consolidator ${pkg.version}\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
