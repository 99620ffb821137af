// The replay fixture for the case study of Karpenter's savings-threshold design (demo/replay-seed-003),
// replayed from 14:00 UTC with daily churn and hourly jobs, under threshold 0 and threshold 1: shared by
// the report test and the browser test.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCatalogFile, readClusterFile, readNodePoolsFile } from '../../src/adapters/files/index.ts';
import { FileStateStore } from '../../src/adapters/state/fileStateStore.ts';
import { runReplay } from '../../src/app/replay/runReplay.ts';
import { parseFeatureGates } from '../../src/core/featureGates.ts';
import { parseChurn } from '../../src/core/replay/churn.ts';
import type { ReplayReport } from '../../src/core/replay/report.ts';

const FIXTURE = join(import.meta.dirname, '../../demo/replay-seed-003');
export const SEED003_CHURN = 'daily=0.6,jobs=4/h';

/** A fresh directory for state files, on a memory file system when there is one (the file store syncs every write). */
export function replayDir(prefix: string): string {
  return mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), prefix));
}

/** Replays the fixture for `passes` passes of 5 minutes, keeping each config's state in `dir`. */
export async function replaySeed003(passes: number, dir: string): Promise<ReplayReport> {
  const [cluster, catalog, zero, one] = await Promise.all([
    readClusterFile(join(FIXTURE, 'cluster.json')),
    readCatalogFile(join(FIXTURE, 'catalog.json')),
    readNodePoolsFile(join(FIXTURE, 'threshold-0.yaml')),
    readNodePoolsFile(join(FIXTURE, 'threshold-1.yaml')),
  ]);
  return runReplay({
    cluster,
    catalog,
    configs: [
      { name: 'threshold-0', nodePools: zero },
      { name: 'threshold-1', nodePools: one },
    ],
    startMs: Date.parse('2026-11-21T14:00:00Z'),
    passes,
    intervalMs: 5 * 60_000,
    scoring: 'least-allocated',
    workload: { kind: 'synthetic', churn: parseChurn(SEED003_CHURN), text: SEED003_CHURN },
    seed: 1,
    launchDelayMs: 90_000,
    gates: parseFeatureGates(undefined, 'FEATURE_GATES'),
    stateStore: (_config, index) => new FileStateStore(join(dir, `state-${index}.json`)),
  });
}
