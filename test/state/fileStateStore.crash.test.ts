// A write that dies between writing the temp file and renaming it over the state file (a crash, a full
// disk): the previous state file is intact and no temp file is left behind.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';

const failRename = vi.hoisted(() => ({ on: false }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...actual,
    rename: async (from: string, to: string): Promise<void> => {
      if (failRename.on) throw Object.assign(new Error('ENOSPC: no space left on device, rename'), { code: 'ENOSPC' });
      return actual.rename(from, to);
    },
  };
});

const { FileStateStore } = await import('../../src/adapters/state/fileStateStore.ts');
const { StateStoreError } = await import('../../src/core/state/errors.ts');
const { nodeState, T0 } = await import('../builders.ts');

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'state-crash-'));
  failRename.on = false;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('a write that fails before the rename leaves the old file and no temp file', async () => {
  const file = join(dir, 'state.json');
  const store = new FileStateStore(file);
  const first = await store.save({ nodes: { a: nodeState({ name: 'a', version: 0 }) }, cluster: { version: 0 }, commands: [] }, await store.load(T0), T0);
  const before = await readFile(file, 'utf8');

  failRename.on = true;
  const next = { ...first, nodes: { ...first.nodes, b: nodeState({ name: 'b', version: 0 }) } };
  const error = await store.save(next, first, T0).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(StateStoreError);
  expect((error as Error).message).toMatch(/save failed: .*ENOSPC/);

  expect(await readdir(dir)).toEqual(['state.json']);
  expect(await readFile(file, 'utf8')).toBe(before);
  failRename.on = false;
  expect(Object.keys((await store.load(T0)).nodes)).toEqual(['a']);
});
