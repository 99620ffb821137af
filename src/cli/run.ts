// The CLI process: arguments, standard streams and the clock handed to `main`, the exit code set.
// bin/eks-consolidator.mjs runs this from the built bundle (dist/) or, in a checkout whose bundle is
// missing or older than the source, through the tsx loader.
import { main } from './main.ts';
import { readAll } from './stdin.ts';

const code = await main(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  clock: () => Date.now(),
  env: process.env,
  readStdin: () => readAll(process.stdin),
  isTTY: process.stdout.isTTY === true,
  columns: process.stdout.columns,
});
process.exitCode = code;
