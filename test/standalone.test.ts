// The repository stands on its own: nothing in it needs the team's reference folder beside the
// checkout (../shared). A copy of the repository's files (what git tracks, plus new files it does not
// ignore; node_modules linked in) is made in a temporary folder with no `shared` beside it, and there
// the tests that once read ../shared run, and the catalog build checks the committed catalog against
// the repository's own copy of the source data.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

/**
 * The test files that read ../shared before the repository had its own copies of the data, and the
 * contract examples' own test. test/cli/inputCampaign.test.ts read it too; it starts from the same
 * fixture as stateBusy and is left out here for time (about 40 s): the scan below covers it.
 */
const ONCE_NEEDED_SHARED = [
  'test/data/bundled.test.ts',
  'test/input/overhead.test.ts',
  'test/input/instanceLabels.test.ts',
  'test/input/files.test.ts',
  'test/cli/stateBusy.test.ts',
  'test/cli/contractExamples.test.ts',
];

/** The files allowed to name the team's folder, and why none of them needs it. */
const MAY_NAME_SHARED: Readonly<Record<string, string>> = {
  'test/cli/contractExamples.test.ts': 'its block over ../shared/examples is optional, and says why when it is skipped',
  'test/readme.test.ts': 'it names ../shared only to forbid it in the README and docs/',
  'test/standalone.test.ts': 'this file',
};

function repositoryFiles(): string[] {
  const r = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ls-files failed (exit ${r.status}): ${r.stderr}`);
  // A tracked file deleted in the working tree is not part of the repository as it is.
  return r.stdout.split('\0').filter((path) => path !== '' && existsSync(join(ROOT, path)) && statSync(join(ROOT, path)).isFile());
}

/** The environment of a run that is not part of this one (no vitest worker variables, no loader flags). */
function ownEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('VITEST') && key !== 'NODE_OPTIONS') env[key] = value;
  return env;
}

const explain = (r: SpawnSyncReturns<string>) => `exit ${r.status}${r.error ? ` (${r.error.message})` : ''}\n${r.stdout.slice(-4000)}\n${r.stderr.slice(-2000)}`;

describe('the repository without ../shared beside it', () => {
  const files = repositoryFiles();
  let parent: string;
  let copy: string;

  beforeAll(() => {
    parent = mkdtempSync(join(tmpdir(), 'ekc-standalone-'));
    copy = join(parent, 'repo');
    for (const path of files) {
      mkdirSync(dirname(join(copy, path)), { recursive: true });
      copyFileSync(join(ROOT, path), join(copy, path));
    }
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
  });

  afterAll(() => {
    if (parent) rmSync(parent, { recursive: true, force: true });
  });

  it('no file names the team folder, except the optional block', () => {
    const naming = files.filter((path) => /\.(ts|mts|mjs|js|json|sh|ya?ml)$/.test(path) && MAY_NAME_SHARED[path] === undefined);
    const offenders = naming.filter((path) => /(\.\.\/shared|\/work\/shared)\b/.test(readFileSync(join(ROOT, path), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('the copy has no shared folder beside it, and holds the data the tests read', () => {
    expect(existsSync(join(parent, 'shared'))).toBe(false);
    expect(existsSync(join(copy, 'data/aws-instance-types-us-east-1.json'))).toBe(true);
    expect(existsSync(join(copy, 'test/fixtures/contract-examples/empty-node-is-deleted/expected.json'))).toBe(true);
  });

  it('the catalog build, in check mode, finds the committed catalog is what the repository data gives', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build-catalog.ts', '--check'], { cwd: copy, env: ownEnv(), encoding: 'utf8', timeout: 120_000 });
    expect(r.status, explain(r)).toBe(0);
    expect(r.stdout).toContain('1345 instance types');
  });

  it('the tests that once needed ../shared pass, and the optional block says why it is skipped', () => {
    const vitest = join(copy, 'node_modules/vitest/vitest.mjs');
    const r = spawnSync(process.execPath, [vitest, 'run', ...ONCE_NEEDED_SHARED, '--maxWorkers=1', '--reporter=verbose', '--color=false'], {
      cwd: copy,
      env: { ...ownEnv(), NO_COLOR: '1' },
      encoding: 'utf8',
      timeout: 300_000,
      maxBuffer: 1 << 26,
    });
    expect(r.status, explain(r)).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`Test Files\\s+${ONCE_NEEDED_SHARED.length} passed`));
    expect(r.stdout).not.toMatch(/\bfailed\b/);
    expect(r.stdout).toContain('skipped, no ../shared/examples beside the checkout');
  }, 300_000);
});
