// `eks-consolidator plan ...` (CONTRACT section 1). Exit codes: 0 plan produced, 2 bad input, 1 internal,
// 3 the --state file is in use by another run.
import { parseArgs } from 'node:util';
import { parseReplacementBound } from '../core/disruption/sizeBound.ts';
import { runPass } from '../app/runPass.ts';
import { FileStateStore, localProcessId } from '../adapters/state/fileStateStore.ts';
import { bundledCatalogPath, DEMO_RECORDED_AT, demoClusterPath, demoNodePoolsPath } from '../adapters/catalog/bundledPaths.ts';
import { readCatalogFile, readClusterFile, readNodePoolsFile } from '../adapters/files/index.ts';
import { InputError } from '../core/errors.ts';
import { parseFeatureGates } from '../core/featureGates.ts';
import { defaultNodePool } from '../core/input/nodePools.ts';
import { shiftClusterTimes } from '../core/model/shiftTimes.ts';
import { renderTable } from './table.ts';

const USAGE = `usage: eks-consolidator plan [--cluster FILE] [--catalog FILE] [--config FILE] [--state FILE]
                            [--now ISO8601] [--format json|table] [--feature-gates NAME=BOOL,...]

Runs one consolidation pass offline, as a dry run, and prints the plan.
With none of --cluster/--catalog/--config it plans the embedded demo.
Exit codes: 0 plan printed, 2 bad input (nothing written), 1 internal error,
3 the --state file is in use by another run.`;

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly clock: () => number;
  readonly env: Readonly<Record<string, string | undefined>>;
}

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await run(argv, io);
  } catch (error) {
    if (error instanceof InputError) {
      io.stderr(`eks-consolidator: ${error.message}\n`);
      return 2;
    }
    io.stderr(`eks-consolidator: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  }
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    io.stdout(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  if (command !== 'plan') throw new InputError('', 'command', `unknown command "${command}"\n${USAGE}`);
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...rest],
      options: {
        cluster: { type: 'string' },
        catalog: { type: 'string' },
        config: { type: 'string' },
        state: { type: 'string' },
        now: { type: 'string' },
        format: { type: 'string', default: 'json' },
        'feature-gates': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw new InputError('', 'arguments', `${(error as Error).message}\n${USAGE}`);
  }
  if (values.help) {
    io.stdout(`${USAGE}\n`);
    return 0;
  }
  const format = values.format as string;
  if (format !== 'json' && format !== 'table') throw new InputError('', '--format', `"${format}" is not json or table`);
  const nowText = values.now as string | undefined;
  const nowMs = nowText === undefined ? io.clock() : Date.parse(nowText);
  if (Number.isNaN(nowMs)) throw new InputError('', '--now', `"${nowText}" is not an ISO 8601 time`);
  const gates = parseFeatureGates((values['feature-gates'] as string | undefined) ?? io.env['FEATURE_GATES'], values['feature-gates'] !== undefined ? '--feature-gates' : 'FEATURE_GATES');
  const replacementBound = parseReplacementBound(io.env['REPLACEMENT_BOUND']);

  // CONTRACT section 1: no inputs at all plans the embedded demo; otherwise a missing --cluster is the
  // demo's cluster, a missing --catalog the bundled catalog, a missing --config one default NodePool.
  const useDemo = values.cluster === undefined && values.catalog === undefined && values.config === undefined;
  const demoCluster = values.cluster === undefined;
  const clusterPath = (values.cluster as string | undefined) ?? demoClusterPath;
  const catalogPath = (values.catalog as string | undefined) ?? bundledCatalogPath;
  const configPath = (values.config as string | undefined) ?? (useDemo ? demoNodePoolsPath : undefined);

  // Read every input before touching the state file, so bad input writes nothing (CONTRACT section 1).
  const [recorded, catalog, nodePools] = await Promise.all([
    readClusterFile(clusterPath),
    readCatalogFile(catalogPath),
    configPath === undefined ? Promise.resolve([defaultNodePool()]) : readNodePoolsFile(configPath),
  ]);
  const notes: string[] = [];
  // The demo is a recording: replay it as if recorded just now, so it plans the same on any day.
  const cluster = demoCluster ? shiftClusterTimes(recorded, nowMs - DEMO_RECORDED_AT) : recorded;
  if (demoCluster && !useDemo) notes.push('no --cluster: planning the bundled sample cluster (times replayed relative to now)');
  if (useDemo) notes.push('embedded demo: bundled sample cluster (times replayed relative to now), bundled catalog (spot prices are estimates), demo NodePools');
  const statePath = values.state as string | undefined;
  const store = statePath === undefined ? undefined : new FileStateStore(statePath);
  const pass = () =>
    runPass(
      { readCluster: async () => cluster, loadCatalog: async () => ({ catalog, warnings: [] }), loadNodePools: async () => nodePools, ...(store ? { state: store } : {}) },
      // A plan is a dry run: it only ever writes the state file, and only when asked to. The file's lease
      // is held in wall-clock time, whatever --now says, by this process (a killed run's lease is broken).
      { nowMs, gates, replacementBound, dryRun: true, persistState: store !== undefined, scope: 'all', owner: `cli-${localProcessId()}`, leaseTtlMs: 10 * 60_000, leaseNowMs: io.clock(), notes },
    );
  let result = await pass();
  // Another run is using the state file: wait a little for it, never print an empty plan as a success.
  const waitMs = Number(io.env['EKS_CONSOLIDATOR_STATE_WAIT_MS'] ?? STATE_BUSY_WAIT_MS);
  const waitUntil = io.clock() + (Number.isFinite(waitMs) && waitMs >= 0 ? waitMs : STATE_BUSY_WAIT_MS);
  while (!result.leaseAcquired && io.clock() < waitUntil) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    result = await pass();
  }
  if (!result.leaseAcquired) {
    const lease = await store?.readLease();
    io.stderr(
      `eks-consolidator: ${statePath}: another run is using this state file${lease ? ` (${lease.owner}, until ${new Date(lease.until).toISOString()})` : ''}; nothing was planned or written. Try again when it has finished.\n`,
    );
    return EXIT_STATE_BUSY;
  }
  io.stdout(format === 'table' ? renderTable(result.plan) : `${JSON.stringify(result.plan, null, 2)}\n`);
  return 0;
}

/** Exit code when `--state` is in use by another run (after waiting `STATE_BUSY_WAIT_MS`). */
export const EXIT_STATE_BUSY = 3;
const STATE_BUSY_WAIT_MS = 10_000;
