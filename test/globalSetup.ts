// Before any test: the CLI's bundle, built from the source as it is, so the tests that run the real
// bin start it without compiling TypeScript (bin/eks-consolidator.mjs would otherwise fall back to tsx).
// @ts-expect-error: a plain ES module script without types
import { buildCli } from '../scripts/build-cli.mjs';

export async function setup(): Promise<void> {
  await buildCli();
}
