// `--version`: the version in package.json (the CLI runs from a checkout, so the file is beside it).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../adapters/catalog/bundledPaths.ts';

export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}
