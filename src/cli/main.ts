// `eks-consolidator plan ...` (docs/file-formats.md). Exit codes: 0 plan produced, 2 bad input, 1
// internal, 3 the --state file is in use by another run.
import { parseArgs } from 'node:util';
import { parseReplacementBound } from '../core/disruption/sizeBound.ts';
import { parsePlanWaves } from '../core/disruption/laterWaves.ts';
import { parseActuatorSetting } from '../core/disruption/actuatorChoice.ts';
import { parseKarpenterPresence } from '../core/disruption/coexistence.ts';
import { parseMaxNodesPerCommand } from '../core/disruption/commandCap.ts';
import { runPass } from '../app/runPass.ts';
import { FileStateStore, localProcessId } from '../adapters/state/fileStateStore.ts';
import { bundledCatalogPath, DEMO_RECORDED_AT, demoClusterPath, demoNodePoolsPath } from '../adapters/catalog/bundledPaths.ts';
import { readCatalogFile, readClusterFile, readNodePoolsFile } from '../adapters/files/index.ts';
import { InputError } from '../core/errors.ts';
import { parseFeatureGates } from '../core/featureGates.ts';
import { show } from '../core/input/fields.ts';
import { defaultNodePool } from '../core/input/nodePools.ts';
import { parseTimestamp } from '../core/input/time.ts';
import { shiftClusterTimes } from '../core/model/shiftTimes.ts';
import { readClusterStdin, STDIN } from './stdin.ts';
import { renderTable, tableWidthFor } from './table.ts';
import { packageVersion } from './version.ts';
import { parsePreferencePolicy } from '../core/scheduling/preferences.ts';
import { replayCommand } from './replay.ts';

const USAGE = `usage: eks-consolidator plan [CLUSTER_FILE | -] [--cluster FILE] [--catalog FILE] [--config FILE]
                             [--state FILE] [--now ISO8601] [-o, --format json|table|wide]
                             [--wide] [--show-moves] [--color auto|always|never]
                             [--feature-gates NAME=BOOL,...] [--max-nodes-per-command N]
                             [--actuator auto|karpenter|ec2] [--karpenter auto|present|absent]
                             [--preference-policy Respect|Ignore]
       eks-consolidator replay [options]       (eks-consolidator replay --help)
       eks-consolidator --help | --version`;

const HELP = `${USAGE}

Runs one consolidation pass offline, as a dry run, and prints the plan. Nothing in the cluster is
changed; the only file ever written is the --state file.

Inputs (each file is JSON or a multi-document YAML stream):
  CLUSTER_FILE, --cluster FILE
                      the cluster: \`kubectl get nodes,pods,poddisruptionbudgets,daemonsets -A -o json\`.
                      "-" reads it from standard input:
                        kubectl get nodes,pods,pdb,ds -A -o json | eks-consolidator plan - -o table
                      default: the bundled sample cluster (times replayed relative to --now)
  --catalog FILE      instance types with capacity and offerings {zone, capacityType, price $/hour}
                      default: the bundled us-east-1 catalog
  --config FILE       karpenter.sh/v1 NodePool objects
                      default: one NodePool "default" with the defaults of docs/file-formats.md
                      (with none of the three inputs: the embedded demo, its own NodePools included)
  --state FILE        keeps pod-event times, grace periods and emptiness times between runs, as the
                      Lambda keeps them in DynamoDB; a missing file is an empty state. default: none
  --now ISO8601       the pass time, e.g. 2026-11-21T12:00:00Z. default: the current time
  --feature-gates G   Karpenter's syntax, e.g. SpotToSpotConsolidation=true
                      default: the FEATURE_GATES variable, else every gate off
  --max-nodes-per-command N
                      the most nodes one decision disrupts (Karpenter's multi-node cap is 100);
                      more empty nodes than that are deleted in several decisions
                      default: the MAX_NODES_PER_COMMAND variable, else 100
  --actuator A        how a real run would carry the decisions out, shown per NodePool in the plan:
                      karpenter (NodeClaims), ec2 (launch templates), or auto: karpenter where
                      Karpenter serves the pool (see --karpenter), else ec2
                      default: the ACTUATOR variable, else auto
  --karpenter K       whether Karpenter runs in the cluster: auto (a pool's nodes carry Karpenter's
                      registration labels), present or absent
                      default: the KARPENTER variable, else auto
  --preference-policy P
                      Karpenter's setting of that name: Respect holds each moved pod to its preferred
                      node/pod affinity and ScheduleAnyway spread, giving them up one by one only when
                      it fits nowhere; Ignore reads only what pods require
                      default: the PREFERENCE_POLICY variable, else Respect

Output:
  -o, --format F      json (default): the plan as JSON, the shape other tools read
                      table: for a person; summary first, then decisions, then every node
                      wide: the table without cutting names, lists or reasons (same as --wide)
  --wide              table at full width: full node names, every instance type, one node per line
  --show-moves        table: where kube-scheduler is expected to put each evicted pod
  --color WHEN        auto (default): colour only when stdout is a terminal; always; never.
                      NO_COLOR set to anything but "" always means never.
  -h, --help          this text
  --version           the version

Environment:
  FEATURE_GATES       as --feature-gates, when the flag is not given
  MAX_NODES_PER_COMMAND, ACTUATOR, KARPENTER, PREFERENCE_POLICY
                      as --max-nodes-per-command, --actuator, --karpenter and --preference-policy,
                      when the flag is not given
  NO_COLOR            any non-empty value: no colour
  REPLACEMENT_BOUND   how large a replacement may be: a scale of the largest node a move removes,
                      optionally with maxPods=N (e.g. 3,maxPods=110), or off. default: 2
  PLAN_WAVES          the later passes the plan projects (its "projection"): default (20 waves, about
                      twice the pass's own work), a number of waves, or off. default: default
  EKS_CONSOLIDATOR_STATE_WAIT_MS
                      how long to wait for a --state file another run holds. default: 10000

Quantities are printed in Kubernetes units: cpu in cores or millicores (1930m), memory in Mi/Gi.
Prices are US dollars; a month is 730 hours.

Exit codes:
  0  a plan was printed (also when it is empty)
  1  internal error
  2  bad input: the message names the file, the object and the field; nothing was written
  3  the --state file is in use by another run (waited; nothing was planned or written)

Also: eks-consolidator replay --help (pass after pass on a simulated cluster; what-if comparisons).`;

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly clock: () => number;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Standard input, read whole (for `plan -`). */
  readonly readStdin?: () => Promise<string>;
  /** Whether stdout is a terminal, and its width (colour and the table's width follow them). */
  readonly isTTY?: boolean;
  readonly columns?: number;
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
  if (command === undefined) {
    io.stderr(`${USAGE}\n\nRun eks-consolidator --help for every flag, default and exit code.\n`);
    return 2;
  }
  if (command === '--help' || command === '-h' || command === 'help') {
    io.stdout(`${HELP}\n`);
    return 0;
  }
  if (command === '--version' || command === '-V' || command === 'version') {
    io.stdout(`eks-consolidator ${packageVersion()}\n`);
    return 0;
  }
  if (command === 'replay') return replayCommand(rest, io);
  if (command !== 'plan') throw new InputError('', 'command', `unknown command "${command}"\n${USAGE}`);
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...rest],
      options: {
        cluster: { type: 'string' },
        catalog: { type: 'string' },
        config: { type: 'string' },
        state: { type: 'string' },
        now: { type: 'string' },
        format: { type: 'string', short: 'o', default: 'json' },
        wide: { type: 'boolean' },
        'show-moves': { type: 'boolean' },
        color: { type: 'string', default: 'auto' },
        'feature-gates': { type: 'string' },
        'max-nodes-per-command': { type: 'string' },
        actuator: { type: 'string' },
        karpenter: { type: 'string' },
        'preference-policy': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: true,
    }));
  } catch (error) {
    throw new InputError('', 'arguments', `${(error as Error).message}\n${USAGE}`);
  }
  if (values.help) {
    io.stdout(`${HELP}\n`);
    return 0;
  }
  if (values.version) {
    io.stdout(`eks-consolidator ${packageVersion()}\n`);
    return 0;
  }
  const format = values.format as string;
  if (format !== 'json' && format !== 'table' && format !== 'wide') throw new InputError('', '--format', `"${format}" is not json, table or wide`);
  const color = values.color as string;
  if (color !== 'auto' && color !== 'always' && color !== 'never') throw new InputError('', '--color', `"${color}" is not auto, always or never`);
  if (positionals.length > 1) throw new InputError('', 'arguments', `one cluster file at most, got ${positionals.map((p) => `"${p}"`).join(', ')}`);
  if (positionals.length === 1) {
    if (values.cluster !== undefined) throw new InputError('', 'arguments', `the cluster is given twice: "${positionals[0]}" and --cluster "${String(values.cluster)}"`);
    values.cluster = positionals[0];
  }
  // Checked before anything is read: an empty path names no file, and would fail only once the pass
  // is over and the state is written.
  if (values.state === '') throw new InputError('', '--state', 'is empty: give the path of a state file (a missing file starts an empty state)');
  const nowText = values.now as string | undefined;
  const nowMs = nowText === undefined ? io.clock() : parseTimestamp(nowText);
  if (typeof nowMs === 'string') throw new InputError('', '--now', `${show(nowText)} ${nowMs}`);
  const gates = parseFeatureGates((values['feature-gates'] as string | undefined) ?? io.env['FEATURE_GATES'], values['feature-gates'] !== undefined ? '--feature-gates' : 'FEATURE_GATES');
  const replacementBound = parseReplacementBound(io.env['REPLACEMENT_BOUND']);
  const planWaves = parsePlanWaves(io.env['PLAN_WAVES']);
  // Each of these: the flag, else the variable of the Lambda's configuration; an error names the one used.
  const fromFlagOrEnv = <T>(flag: string, variable: string, parse: (text: string | undefined, source: string) => T): T =>
    values[flag] !== undefined ? parse(values[flag] as string, `--${flag}`) : parse(io.env[variable], variable);
  const maxNodesPerCommand = fromFlagOrEnv('max-nodes-per-command', 'MAX_NODES_PER_COMMAND', parseMaxNodesPerCommand);
  const actuator = fromFlagOrEnv('actuator', 'ACTUATOR', parseActuatorSetting);
  const karpenterPresence = fromFlagOrEnv('karpenter', 'KARPENTER', parseKarpenterPresence);
  const preferencePolicy = fromFlagOrEnv('preference-policy', 'PREFERENCE_POLICY', parsePreferencePolicy);

  // No inputs at all plans the embedded demo; otherwise a missing --cluster is the
  // demo's cluster, a missing --catalog the bundled catalog, a missing --config one default NodePool.
  const useDemo = values.cluster === undefined && values.catalog === undefined && values.config === undefined;
  const demoCluster = values.cluster === undefined;
  const clusterPath = (values.cluster as string | undefined) ?? demoClusterPath;
  const catalogPath = (values.catalog as string | undefined) ?? bundledCatalogPath;
  const configPath = (values.config as string | undefined) ?? (useDemo ? demoNodePoolsPath : undefined);

  // Read every input before touching the state file, so bad input writes nothing (docs/file-formats.md,
  // "Bad input").
  const [recorded, catalog, nodePools] = await Promise.all([
    clusterPath === STDIN ? readClusterStdin(io) : readClusterFile(clusterPath),
    readCatalogFile(catalogPath),
    configPath === undefined ? Promise.resolve([defaultNodePool()]) : readNodePoolsFile(configPath),
  ]);
  const notes: string[] = [];
  // The demo is a recording: replay it as if recorded just now, so it plans the same on any day.
  const cluster = demoCluster ? shiftClusterTimes(recorded, nowMs - DEMO_RECORDED_AT) : recorded;
  if (demoCluster && !useDemo) notes.push('no --cluster: planning the bundled sample cluster (times replayed relative to now)');
  if (useDemo) notes.push('embedded demo: bundled sample cluster (times replayed relative to now), bundled catalog (spot prices are estimates), demo NodePools');
  const statePath = values.state as string | undefined;
  const store = statePath === undefined ? undefined : new FileStateStore(statePath, { passTimeMs: nowMs });
  const pass = () =>
    runPass(
      { readCluster: async () => cluster, loadCatalog: async () => ({ catalog, warnings: [] }), loadNodePools: async () => nodePools, ...(store ? { state: store } : {}) },
      // A plan is a dry run: it only ever writes the state file, and only when asked to. The file's lease
      // is held in wall-clock time, whatever --now says, by this process (a killed run's lease is broken).
      { nowMs, gates, replacementBound, planWaves, maxNodesPerCommand, preferencePolicy, actuator, karpenterPresence, nodePoolsFromCluster: false, dryRun: true, persistState: store !== undefined, scope: 'all', owner: `cli-${localProcessId()}`, leaseTtlMs: 10 * 60_000, leaseNowMs: io.clock(), notes },
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
  if (format === 'json') {
    io.stdout(`${JSON.stringify(result.plan, null, 2)}\n`);
  } else {
    // NO_COLOR (no-color.org): any non-empty value turns colour off, whatever --color says.
    const noColor = (io.env['NO_COLOR'] ?? '') !== '';
    io.stdout(
      renderTable(result.plan, {
        wide: format === 'wide' || values.wide === true,
        showMoves: values['show-moves'] === true,
        color: !noColor && (color === 'always' || (color === 'auto' && io.isTTY === true)),
        width: tableWidthFor(io),
      }),
    );
  }
  return 0;
}

/** Exit code when `--state` is in use by another run (after waiting `STATE_BUSY_WAIT_MS`). */
export const EXIT_STATE_BUSY = 3;
const STATE_BUSY_WAIT_MS = 10_000;
