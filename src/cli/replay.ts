// `eks-consolidator replay ...`: pass after pass of the product on a simulated cluster, and what-if
// comparisons of NodePool configs over the same timeline. See docs/replay.md.
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { bundledCatalogPath, DEMO_RECORDED_AT, demoClusterPath, demoNodePoolsPath } from '../adapters/catalog/bundledPaths.ts';
import { readCatalogFile, readClusterFile, readNodePoolsFile } from '../adapters/files/index.ts';
import { FileStateStore } from '../adapters/state/fileStateStore.ts';
import { runReplay, type ReplayConfig, type WorkloadSource } from '../app/replay/runReplay.ts';
import { InputError } from '../core/errors.ts';
import { parseFeatureGates } from '../core/featureGates.ts';
import { goDurationOrNull } from '../core/input/duration.ts';
import { defaultNodePool } from '../core/input/nodePools.ts';
import type { Cluster } from '../core/model/types.ts';
import { parseChurn } from '../core/replay/churn.ts';
import { reportFromLedger } from '../core/replay/fromLedger.ts';
import { orderDumps, recordedEvents, recordingChurn, timeFromFileName, type Dump } from '../core/replay/recording.ts';
import type { ReplayReport } from '../core/replay/report.ts';
import { SCHEDULER_SCORINGS, type SchedulerScoring } from '../core/replay/scheduler.ts';
import { readLedger } from './ledgerSource.ts';
import type { CliIo } from './main.ts';
import { renderReplayHtml } from './replayHtml.ts';
import { renderReplayTable } from './replayTable.ts';
import { tableWidthFor } from './table.ts';

export const REPLAY_USAGE = `usage: eks-consolidator replay [--cluster FILE] [--catalog FILE] [--config FILE | --compare A.yaml B.yaml ...]
                              [--passes N] [--interval 5m] [--launch-delay 90s] [--now ISO8601]
                              [--scheduler least-allocated|most-allocated] [--churn SPEC] [--seed N]
                              [--feature-gates NAME=BOOL,...] [--format json|table|html] [--wide] [--out FILE]
       eks-consolidator replay --from-ledger STATE_FILE|dynamodb://TABLE/CLUSTER
                              [--format json|table|html] [--wide] [--out FILE]

Runs the consolidation pass after pass on a simulated cluster: decisions are carried out (replacements
join after the launch delay, evicted pods are recreated and scheduled, pending pods get new nodes), the
workload changes as --churn says, and the state is kept between passes as --state keeps it.
--compare replays the same timeline under each NodePool config and prints one row per config.
--churn: none, or NAME=VALUE,... with daily=0..1, peak=HOUR, jobs=N/h, jobLength=30m, jobCpu=500m,
jobMemory=1Gi, restarts=N/h, after=3h (no change before then). Defaults: 288 passes of 5m (a day),
launch delay 90s, least-allocated, no churn, seed 1, json on stdout. Without --cluster/--catalog/--config
it replays the embedded demo.
--format table fits 120 columns (a narrower terminal's width); --wide cuts nothing.
--cluster DIR: a directory of dumps timed by their file names (2026-11-21T12-00-00Z.json ...): the
first is the starting cluster, the pods arriving and leaving between them are the workload (no --churn).
--from-ledger FILE: shows the real passes a state file's ledger recorded (planned and realised savings,
re-replaced nodes) in the same formats; no simulation. dynamodb://TABLE/CLUSTER reads the Lambda's
ledger from its state table instead (your AWS credentials and region; read only).`;

const DEFAULT_PASSES = 288;
const MAX_PASSES = 100_000;

export async function replayCommand(args: readonly string[], io: CliIo): Promise<number> {
  let values: Record<string, string | boolean | string[] | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...args],
      options: {
        cluster: { type: 'string' },
        catalog: { type: 'string' },
        config: { type: 'string' },
        compare: { type: 'string', multiple: true },
        passes: { type: 'string' },
        interval: { type: 'string', default: '5m' },
        'launch-delay': { type: 'string', default: '90s' },
        now: { type: 'string' },
        scheduler: { type: 'string', default: 'least-allocated' },
        churn: { type: 'string' },
        seed: { type: 'string', default: '1' },
        'feature-gates': { type: 'string' },
        format: { type: 'string', default: 'json' },
        out: { type: 'string' },
        wide: { type: 'boolean' },
        'from-ledger': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    }));
  } catch (error) {
    throw new InputError('', 'arguments', `${(error as Error).message}\n${REPLAY_USAGE}`);
  }
  if (values.help) {
    io.stdout(`${REPLAY_USAGE}\n`);
    return 0;
  }
  const compare = [...((values.compare as string[] | undefined) ?? [])];
  // `--compare a.yaml b.yaml`: the files after the first are positionals.
  if (positionals.length > 0) {
    if (compare.length === 0) throw new InputError('', 'arguments', `unexpected argument "${positionals[0]}"\n${REPLAY_USAGE}`);
    compare.push(...positionals);
  }
  if (compare.length > 0 && values.config !== undefined) throw new InputError('', '--compare', 'give either --config or --compare, not both');

  const format = values.format as string;
  if (format !== 'json' && format !== 'table' && format !== 'html') throw new InputError('', '--format', `"${format}" is not json, table or html`);
  // Checked before any work: a replay of hundreds of passes should not end in a write that cannot happen.
  await requireOutDirectory(values.out as string | undefined);
  const ledgerPath = values['from-ledger'] as string | undefined;
  if (ledgerPath !== undefined) {
    const simulated = ['cluster', 'catalog', 'config', 'compare', 'passes', 'churn', 'now'].filter((flag) => values[flag] !== undefined);
    if (simulated.length > 0) throw new InputError('', '--from-ledger', `shows recorded passes; leave out --${simulated.join(', --')}`);
    const { entries, label } = await readLedger(ledgerPath);
    await emit(reportFromLedger([...entries], label), format, values.out as string | undefined, io, values.wide === true);
    return 0;
  }
  const seed = integer('--seed', values.seed as string, 0, 2 ** 31 - 1);
  const intervalMs = duration('--interval', values.interval as string, 1);
  const launchDelayMs = duration('--launch-delay', values['launch-delay'] as string, 0);
  const scoring = values.scheduler as string;
  if (!SCHEDULER_SCORINGS.includes(scoring as SchedulerScoring)) throw new InputError('', '--scheduler', `"${scoring}" is not ${SCHEDULER_SCORINGS.join(' or ')}`);
  const churnText = (values.churn as string | undefined) ?? 'none';
  const churn = parseChurn(churnText);
  const gates = parseFeatureGates((values['feature-gates'] as string | undefined) ?? io.env['FEATURE_GATES'], values['feature-gates'] !== undefined ? '--feature-gates' : 'FEATURE_GATES');

  const useDemo = values.cluster === undefined && values.catalog === undefined && values.config === undefined && compare.length === 0;
  const clusterPath = (values.cluster as string | undefined) ?? demoClusterPath;
  const catalogPath = (values.catalog as string | undefined) ?? bundledCatalogPath;
  const configPaths = compare.length > 0 ? compare : values.config !== undefined ? [values.config as string] : useDemo || values.cluster === undefined ? [demoNodePoolsPath] : [];

  // A directory of timestamped dumps is a recording: its pod arrivals and departures are the workload.
  const recording = (await stat(clusterPath).catch(() => undefined))?.isDirectory() ? await readRecording(clusterPath) : undefined;
  if (recording && values.churn !== undefined) throw new InputError('', '--churn', 'a recording (--cluster DIR) brings its own workload changes; leave --churn out');
  const [cluster, catalog, ...poolSets] = await Promise.all([
    recording ? Promise.resolve(recording[0]!.cluster) : readClusterFile(clusterPath),
    readCatalogFile(catalogPath),
    ...configPaths.map((path) => readNodePoolsFile(path)),
  ]);
  const configs: ReplayConfig[] =
    configPaths.length === 0 ? [{ name: 'default', nodePools: [defaultNodePool()] }] : configPaths.map((path, i) => ({ name: configName(path, configPaths), nodePools: poolSets[i]! }));

  const nowText = values.now as string | undefined;
  const startMs =
    nowText !== undefined ? Date.parse(nowText) : recording ? recording[0]!.atMs : values.cluster === undefined ? DEMO_RECORDED_AT : latestTime(cluster, io.clock());
  if (Number.isNaN(startMs)) throw new InputError('', '--now', `"${nowText}" is not an ISO 8601 time`);
  // A recording is replayed to its last dump unless --passes says otherwise.
  const recordedPasses = recording ? Math.max(1, Math.ceil((recording[recording.length - 1]!.atMs - startMs) / intervalMs)) : undefined;
  const passes = integer('--passes', (values.passes as string | undefined) ?? String(recordedPasses ?? DEFAULT_PASSES), 1, MAX_PASSES);

  const notes: string[] = [];
  if (values.cluster === undefined) notes.push('no --cluster: replaying the bundled sample cluster from its recording time');
  const workload: WorkloadSource = recording
    ? { kind: 'recording', text: `recording of ${recording.length} dumps (${basename(clusterPath)})`, create: recordingChurn(recordedEvents(recording)) }
    : { kind: 'synthetic', churn, text: churnText };
  if (recording) notes.push(`recording: ${recording.length} dumps from ${recording[0]!.file} to ${recording[recording.length - 1]!.file}; pod arrivals and departures replayed, recorded nodes after the first dump ignored`);

  const dir = await mkdtemp(join(await scratchRoot(), 'eks-consolidator-replay-'));
  let report: ReplayReport;
  try {
    report = await runReplay({
      cluster,
      catalog,
      configs,
      startMs,
      passes,
      intervalMs,
      scoring: scoring as SchedulerScoring,
      workload,
      seed,
      launchDelayMs,
      gates,
      // Each config starts from an empty state file, kept between its passes as `plan --state` keeps it.
      stateStore: (_config, index) => new FileStateStore(join(dir, `state-${index}.json`)),
      notes,
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  await emit(report, format, values.out as string | undefined, io, values.wide === true);
  return 0;
}

async function emit(report: ReplayReport, format: string, out: string | undefined, io: CliIo, wide: boolean): Promise<void> {
  // The plan table's width rule; a file is not a terminal.
  const width = tableWidthFor(out === undefined ? io : {});
  const text = format === 'table' ? renderReplayTable(report, { wide, width }) : format === 'html' ? renderReplayHtml(report) : `${JSON.stringify(report, null, 2)}\n`;
  if (out === undefined) io.stdout(text);
  else {
    await writeFile(out, text);
    io.stderr(`eks-consolidator: replay written to ${out}\n`);
  }
}

/** `--out` must name a file in a directory that exists (the replay does not create directories). */
async function requireOutDirectory(out: string | undefined): Promise<void> {
  if (out === undefined) return;
  if (out === '') throw new InputError('', '--out', 'is empty: give the path of the file to write');
  const dir = dirname(out);
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new InputError('', '--out', `directory ${dir} does not exist (create it first, or write the report elsewhere)`);
  if ((await stat(out).catch(() => undefined))?.isDirectory()) throw new InputError('', '--out', `${out} is a directory; give a file name`);
}

function integer(flag: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value < min || value > max) throw new InputError('', flag, `"${text}" is not a whole number from ${min} to ${max}`);
  return value;
}

function duration(flag: string, text: string, minMs: number): number {
  const ms = goDurationOrNull(text);
  if (ms === null || ms < minMs) throw new InputError('', flag, `"${text}" is not a duration${minMs > 0 ? ' above zero' : ''} such as 5m or 90s`);
  return ms;
}

/** A config's name in the report: its file name, made unique when two files share one. */
function configName(path: string, all: readonly string[]): string {
  const name = basename(path).replace(/\.(ya?ml|json)$/, '');
  return all.filter((p) => basename(p).replace(/\.(ya?ml|json)$/, '') === name).length > 1 ? path : name;
}

/** A dump's own time: the latest creation, start or Ready time in it (so a replay starts where it was taken). */
function latestTime(cluster: Cluster, fallbackMs: number): number {
  let latest = Number.NEGATIVE_INFINITY;
  for (const node of cluster.nodes) latest = Math.max(latest, node.createdAt, node.readySince ?? latest);
  for (const pod of cluster.pods) latest = Math.max(latest, pod.createdAt ?? latest, pod.startedAt ?? latest);
  return Number.isFinite(latest) ? Math.ceil(latest / 60_000) * 60_000 : fallbackMs;
}

/**
 * Where the replay keeps its state files: a memory file system when the machine has one. The file store
 * syncs every write to disk, which is right for a real `--state` file but makes a replay of hundreds of
 * passes wait on the disk for nothing (the files are deleted at the end).
 */
async function scratchRoot(): Promise<string> {
  const shm = await stat('/dev/shm').catch(() => undefined);
  return shm?.isDirectory() ? '/dev/shm' : tmpdir();
}

/** The dumps of a recording directory (`*.json`, `*.yaml`, `*.yml`), each timed by its file name. */
async function readRecording(dir: string): Promise<Dump[]> {
  const names = (await readdir(dir)).filter((name) => /\.(json|ya?ml)$/.test(name)).sort();
  if (names.length === 0) throw new InputError('', '', 'the recording directory has no .json or .yaml dump').inFile(dir);
  const dumps = await Promise.all(
    names.map(async (name) => {
      const file = join(dir, name);
      const atMs = timeFromFileName(name);
      if (atMs === undefined) throw new InputError('', '', 'a dump of a recording needs its time in its file name, e.g. 2026-11-21T12-00-00Z.json').inFile(file);
      return { file, atMs, cluster: await readClusterFile(file) };
    }),
  );
  return orderDumps(dumps);
}
