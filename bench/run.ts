// `npm run bench [-- sizes [budgets [repeats]]]`: for each size (default 100,1000,2000,5000 nodes, about
// 30 pods per node), writes a kubectl-sized cluster file (bench/writeCluster.ts: managedFields, env,
// probes, volumes, status; daemonsets, PDBs, zone spread, hostname anti-affinity), measures how long
// merely JSON.parse-ing it takes (bench/parseOnly.ts), then plans one full pass per NodePool budget
// (default `100%` and `default`, i.e. Karpenter's 10%) against the full bundled catalog
// (bench/one.ts). Every step runs in its own process, so each peak RSS is that step's alone. With
// repeats > 1 each measurement is repeated and the median printed (the machine may be shared).
//
// Prints per row: pass time (read the file + plan), its ratio to the parse time, peak RSS and pods
// placed per second of simulation, then a Markdown table for the README. Tests never assert time.
// BENCH_HEAP_MB sets V8's heap limit for the measured passes (default 1536, as in a 1,769 MB Lambda).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sizes = (process.argv[2] ?? '100,1000,2000,5000').split(',').map(Number);
const budgets = (process.argv[3] ?? '100%,default').split(',');
const repeats = Math.max(1, Number(process.argv[4] ?? 1));
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
  const r = spawnSync(process.execPath, [`--max-old-space-size=${heap}`, '--import', 'tsx', script(name), ...args], {
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

function repeated(name: string, args: string[]): Record<string, any> | undefined {
  const rows: Record<string, any>[] = [];
  for (let k = 0; k < repeats; k++) {
    const row = run(name, args);
    if (!row) return undefined;
    rows.push(row);
  }
  const out: Record<string, any> = { ...rows[0] };
  for (const key of Object.keys(out)) if (typeof out[key] === 'number') out[key] = median(rows.map((r) => r[key] as number));
  return out;
}

const table: string[] = [
  '| nodes | pods | file | budget | JSON.parse | pass (read + plan) | pass / parse | peak RSS | pods placed/s | decisions |',
  '| ---: | ---: | ---: | :--- | ---: | ---: | ---: | ---: | ---: | ---: |',
];
for (const nodes of sizes) {
  const file = join(dir, `cluster-${nodes}.json`);
  if (!existsSync(file)) {
    if (!run('writeCluster.ts', [String(nodes), file])) continue;
  }
  const mib = Math.round(statSync(file).size / (1 << 20));
  const parsed = repeated('parseOnly.ts', [file]);
  if (!parsed) continue;
  for (const budget of budgets) {
    const row = repeated('one.ts', [file, budget]);
    if (!row) continue;
    const ratio = row.passSeconds / parsed.parseSeconds;
    console.log(
      `${String(row.nodes).padStart(5)} nodes ${String(row.pods).padStart(6)} pods ${String(mib).padStart(5)} MiB | budget ${budget.padEnd(7)}` +
        ` | parse ${parsed.parseSeconds.toFixed(2)} s (${parsed.mode}) | pass ${row.passSeconds.toFixed(2)} s` +
        ` (read ${row.readSeconds.toFixed(2)} s, plan ${row.planSeconds.toFixed(2)} s) = ${ratio.toFixed(1)}x parse` +
        ` | peak RSS ${row.peakRssMiB} MiB | ${row.simulations} simulations, ${row.podsPlacedPerSecond.toLocaleString('en-US')} pods placed/s` +
        ` | ${row.decisions} decisions ${JSON.stringify(row.byMethod)}`,
    );
    table.push(
      `| ${row.nodes.toLocaleString('en-US')} | ${row.pods.toLocaleString('en-US')} | ${mib.toLocaleString('en-US')} MiB | ${budget} |` +
        ` ${parsed.parseSeconds.toFixed(2)} s${parsed.mode === 'items' ? '*' : ''} | ${row.passSeconds.toFixed(2)} s | ${ratio.toFixed(1)}x |` +
        ` ${row.peakRssMiB.toLocaleString('en-US')} MiB | ${row.podsPlacedPerSecond.toLocaleString('en-US')} | ${row.decisions} |`,
    );
  }
}
console.log(`\n${table.join('\n')}`);
if (repeats > 1) console.log(`(medians of ${repeats} runs)`);

// Then the CLI's start-up (bench/startup.mjs: bare node, --version, the demo plan), 3 runs each.
const startup = spawnSync(process.execPath, [script('startup.mjs'), '3'], { encoding: 'utf8' });
console.log(`\n${startup.stdout.trim()}`);
if (startup.status !== 0) {
  console.error(startup.stderr.slice(-2000));
  process.exitCode = 1;
}
