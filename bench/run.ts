// `npm run bench`: plans generated clusters of 100, 1,000 and 5,000 nodes (about 30 pods each, with
// daemonsets, PDBs and spread constraints) against the full bundled catalog of 1,345 instance types,
// each size in its own process, and prints pass time, peak memory and simulation throughput.
// Target on the reference machine (2 cores): 1,000 nodes / 30,000 pods planned in under 10 s and 1 GiB.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const sizes = (process.argv[2] ?? '100,1000,5000').split(',').map(Number);
const one = fileURLToPath(new URL('./one.ts', import.meta.url));
const rows: Record<string, unknown>[] = [];
for (const nodes of sizes) {
  const r = spawnSync(process.execPath, ['--max-old-space-size=4096', '--import', 'tsx', one, String(nodes), '30'], { encoding: 'utf8' });
  if (r.status !== 0) {
    console.error(`size ${nodes} failed:\n${r.stderr}`);
    process.exitCode = 1;
    continue;
  }
  const row = JSON.parse(r.stdout.trim().split('\n').pop()!);
  rows.push(row);
  console.log(
    `${String(row.nodes).padStart(5)} nodes ${String(row.pods).padStart(6)} pods | pass ${row.passSeconds.toFixed(2)} s` +
      ` (load ${row.loadSeconds.toFixed(2)} s) | peak RSS ${row.peakRssMiB} MiB | ${row.simulations} simulations,` +
      ` ${row.podsPlacedPerSecond.toLocaleString('en-US')} pods placed/s | ${row.decisions} decisions ${JSON.stringify(row.byMethod)}` +
      ` | saves $${row.savingsPerHour}/h`,
  );
}
