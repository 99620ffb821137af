// `npm run bench:startup [-- runs]`: how long the CLI takes to start, as a user meets it. Prints the
// median wall time (default 7 runs each, the machine may be shared) of
// - a bare `node -e 0`, the floor no CLI can go below;
// - `eks-consolidator --version`, answered by the bin before the bundle is loaded;
// - `eks-consolidator plan --format table` on the embedded demo (read, plan, render), the README's first
//   command.
// The bundle is rebuilt first (scripts/build-cli.mjs), so what is measured is the source as it is and
// not the tsx fallback the bin takes when the bundle is older than src/. Tests never assert time.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildCli } from '../scripts/build-cli.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = fileURLToPath(new URL('../bin/eks-consolidator.mjs', import.meta.url));
const runs = Math.max(1, Number(process.argv[2] ?? 7));

/** Median wall time of `node ...args`, in milliseconds; exits non-zero if a run fails. */
function medianMs(args) {
  const times = [];
  for (let k = 0; k < runs; k++) {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 24 });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (r.status !== 0) {
      console.error(`node ${args.join(' ')} exited ${r.status}:\n${r.stderr.slice(-2000)}`);
      process.exit(1);
    }
  }
  times.sort((a, b) => a - b);
  const mid = times.length >> 1;
  return times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
}

await buildCli();
const bare = medianMs(['-e', '0']);
const version = medianMs([bin, '--version']);
const plan = medianMs([bin, 'plan', '--format', 'table']);
const ms = (x) => `${Math.round(x).toString().padStart(5)} ms`;
console.log(`node -e 0                          ${ms(bare)}`);
console.log(`eks-consolidator --version         ${ms(version)}  (${Math.round(version - bare)} ms over bare node)`);
console.log(`eks-consolidator plan (demo table) ${ms(plan)}`);
console.log(`(medians of ${runs} runs)`);
