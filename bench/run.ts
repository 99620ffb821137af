// `npm run bench [-- sizes [budgets [repeats]]]`: for each size (default 100,1000,2000,5000 nodes, about
// 30 pods per node), writes a kubectl-sized cluster file (bench/writeCluster.ts: managedFields, env,
// probes, volumes, status; daemonsets, PDBs, zone spread, hostname anti-affinity), measures how long
// merely JSON.parse-ing it takes (bench/parseOnly.ts), then, per NodePool budget (default `100%` and
// `default`, i.e. Karpenter's 10%), plans it twice against the full bundled catalog (bench/one.ts), both
// the way `eks-consolidator plan` does (src/app/runPass.ts):
// - the pass alone (`PLAN_WAVES=off`): the decisions of this pass, without the projection of later waves;
// - the CLI's default (`PLAN_WAVES` unset): the same pass and the later waves it projects
//   (core/disruption/laterWaves.ts, its default limits), which is what `plan` prints without flags.
// Every step runs in its own process, so each peak RSS is that step's alone. Each measurement is taken
// `repeats` times (default 3, the two plans taking turns) and the median printed: the machine may be shared.
//
// Prints per size and budget one row with both plans side by side (time = read the file + plan, its ratio
// to the parse time, peak RSS), the pass's decisions and the later waves, then a line of detail
// (read/plan split, simulations and pods placed per second of simulation, decisions by method), then a
// Markdown table for the README. Tests never assert time.
// BENCH_HEAP_MB sets V8's heap limit for the measured plans (default 1536, as in a 1,769 MB Lambda);
// BENCH_DIR where the cluster files are kept; BENCH_DECISIONS=<file> makes bench/one.ts write decisions.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const sizes = (process.argv[2] ?? '100,1000,2000,5000').split(',').map(Number);
const budgets = (process.argv[3] ?? '100%,default').split(',');
const repeats = Math.max(1, Number(process.argv[4] ?? 3));
const dir = process.env['BENCH_DIR'] ?? join(tmpdir(), 'eks-consolidator-bench');
// The heap a Lambda of 1,769 MB (1 vCPU, the yardstick of docs/benchmarks.md) leaves to V8. With a much
// larger limit V8 collects lazily and peak RSS measures that laziness rather than what the pass keeps
// alive (2,000 nodes at 100%: 1,354 MiB with a 6 GiB heap limit, 586 MiB with this one, at about the
// same time).
const heapMiB = Number(process.env['BENCH_HEAP_MB'] ?? 1536);
mkdirSync(dir, { recursive: true });
const script = (name: string): string => fileURLToPath(new URL(`./${name}`, import.meta.url));

function run(name: string, args: string[]): Record<string, any> | undefined {
  // The yardstick (a whole JSON.parse of a file of up to 500 MiB) and the file writer are not the Lambda.
  const heap = name === 'one.ts' ? heapMiB : 6144;
  // The plans time their simulations through a stand-in simulator (bench/timeSimulations.mjs).
  const hooks = name === 'one.ts' ? ['--import', pathToFileURL(script('timeSimulations.mjs')).href] : [];
  const r = spawnSync(process.execPath, [`--max-old-space-size=${heap}`, '--import', 'tsx', ...hooks, script(name), ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  if (r.status !== 0) {
    console.error(`${name} ${args.join(' ')} failed:\n${r.stderr.slice(-2000)}`);
    process.exitCode = 1;
    return undefined;
  }
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * Each of `runs` (a script and its arguments) `repeats` times, taking turns so that a change in the
 * machine's load falls on all of them alike; per run the median of every number, the rest of its first
 * row, and every distinct `decisionsDigest` seen (a plan is deterministic: more than one is a bug).
 */
function repeated(runs: readonly (readonly [string, string[]])[]): Record<string, any>[] | undefined {
  const rows: Record<string, any>[][] = runs.map(() => []);
  for (let k = 0; k < repeats; k++) {
    for (const [i, [name, args]] of runs.entries()) {
      const row = run(name, args);
      if (!row) return undefined;
      rows[i]!.push(row);
    }
  }
  return rows.map((all) => {
    const out: Record<string, any> = { ...all[0] };
    for (const key of Object.keys(out)) if (typeof out[key] === 'number') out[key] = median(all.map((r) => r[key] as number));
    out['digests'] = [...new Set(all.map((r) => r['decisionsDigest']))];
    return out;
  });
}

const en = (n: number): string => n.toLocaleString('en-US');
const seconds = (s: number): string => `${s.toFixed(2)} s`;
/** The later waves of a CLI-default plan, e.g. `4 (12 decisions)`, with the limit that cut them short. */
const laterWaves = (row: Record<string, any>): string =>
  `${row.laterWaves} (${row.laterDecisions} decisions${row.projectionStop && row.projectionStop !== 'settled' ? `; ${row.projectionStop}` : ''})`;

const table: string[] = [
  '| nodes | pods | file | budget | JSON.parse | pass alone | pass / parse | pass peak RSS | CLI default (pass + later waves) | CLI default / parse | CLI default peak RSS | decisions | later waves | pods placed/s |',
  '| ---: | ---: | ---: | :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
];
for (const nodes of sizes) {
  const file = join(dir, `cluster-${nodes}.json`);
  if (!existsSync(file)) {
    if (!run('writeCluster.ts', [String(nodes), file])) continue;
  }
  const mib = Math.round(statSync(file).size / (1 << 20));
  const [parsed] = repeated([['parseOnly.ts', [file]]]) ?? [];
  if (!parsed) continue;
  const parse = `${seconds(parsed.parseSeconds)}${parsed.mode === 'items' ? '*' : ''}`;
  for (const budget of budgets) {
    const both = repeated([
      ['one.ts', [file, budget, 'off']],
      ['one.ts', [file, budget, 'default']],
    ]);
    if (!both) continue;
    const [pass, cli] = both as [Record<string, any>, Record<string, any>];
    const passRatio = pass.passSeconds / parsed.parseSeconds;
    const cliRatio = cli.passSeconds / parsed.parseSeconds;
    console.log(
      `${String(pass.nodes).padStart(5)} nodes ${String(pass.pods).padStart(6)} pods ${String(mib).padStart(5)} MiB | budget ${budget.padEnd(7)}` +
        ` | parse ${seconds(parsed.parseSeconds)} (${parsed.mode})` +
        ` | pass alone ${seconds(pass.passSeconds)} = ${passRatio.toFixed(1)}x parse, peak RSS ${en(pass.peakRssMiB)} MiB` +
        ` | CLI default ${seconds(cli.passSeconds)} = ${cliRatio.toFixed(1)}x parse, peak RSS ${en(cli.peakRssMiB)} MiB` +
        ` | ${pass.decisions} decisions, later waves ${laterWaves(cli)}`,
    );
    const detail = (row: Record<string, any>): string =>
      `read ${seconds(row.readSeconds)}, plan ${seconds(row.planSeconds)}, ${en(row.simulations)} simulations, ${en(row.podsPlacedPerSecond)} pods placed/s`;
    console.log(`      pass alone: ${detail(pass)} | CLI default: ${detail(cli)} | ${JSON.stringify(pass.byMethod)}`);
    // The CLI default plans the same pass and then projects: its own decisions must be the pass's.
    const digests = new Set([...pass.digests, ...cli.digests]);
    if (digests.size > 1) {
      console.error(`      the pass's decisions differ between runs or between the two plans (digests ${[...digests].join(', ')})`);
      process.exitCode = 1;
    }
    table.push(
      `| ${en(pass.nodes)} | ${en(pass.pods)} | ${en(mib)} MiB | ${budget} | ${parse} |` +
        ` ${seconds(pass.passSeconds)} | ${passRatio.toFixed(1)}x | ${en(pass.peakRssMiB)} MiB |` +
        ` ${seconds(cli.passSeconds)} | ${cliRatio.toFixed(1)}x | ${en(cli.peakRssMiB)} MiB |` +
        ` ${pass.decisions} | ${laterWaves(cli)} | ${en(pass.podsPlacedPerSecond)} |`,
    );
  }
}
console.log(`\n${table.join('\n')}`);
console.log(
  '(each time is reading the file plus planning; "pass alone" is `PLAN_WAVES=off`, "CLI default" the same pass and its projection of later waves; pods placed/s: the pass alone' +
    `${repeats > 1 ? `; medians of ${repeats} runs` : ''})`,
);

// Then the CLI's start-up (bench/startup.mjs: bare node, --version, the demo plan), 3 runs each.
const startup = spawnSync(process.execPath, [script('startup.mjs'), '3'], { encoding: 'utf8' });
console.log(`\n${startup.stdout.trim()}`);
if (startup.status !== 0) {
  console.error(startup.stderr.slice(-2000));
  process.exitCode = 1;
}
