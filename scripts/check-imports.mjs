#!/usr/bin/env node
// The dependency direction is the architecture (README.md, "Internals"). This check fails the lint step
// when a file imports across a forbidden boundary:
// - src/core/ is pure: no adapters, app, handlers or CLI; no SDK or I/O package; no node: built-ins
//   except a few pure ones; no `process`, and no reading of the clock (time is passed in).
// - src/adapters/ never imports app, handlers or CLI.
// - src/app/ never imports handlers or CLI.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const src = join(root, 'src');
const PURE_NODE_BUILTINS = new Set(['node:crypto']); // hashing for fingerprints only
const CORE_ALLOWED_PACKAGES = new Set(['cron-parser']); // pure cron arithmetic (budget schedules, Karpenter's disruption-controls design)
const layerOf = (file) => relative(src, file).split('/')[0];
const forbidden = {
  core: new Set(['adapters', 'app', 'handlers', 'cli']),
  adapters: new Set(['app', 'handlers', 'cli']),
  app: new Set(['handlers', 'cli']),
  handlers: new Set(['cli']),
  cli: new Set(['handlers']),
};

function* walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else if (/\.(ts|mts|js|mjs)$/.test(name)) yield path;
  }
}

const problems = [];
for (const file of walk(src)) {
  const layer = layerOf(file);
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const where = `${relative(root, file)}:${i + 1}`;
    for (const m of line.matchAll(/(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"]([^'"]+)['"]/g)) {
      const spec = m[1];
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec);
        if (!target.startsWith(src)) continue;
        const targetLayer = layerOf(target);
        if (forbidden[layer]?.has(targetLayer)) problems.push(`${where}: ${layer} must not import ${targetLayer} (${spec})`);
      } else if (layer === 'core') {
        if (spec.startsWith('node:') ? !PURE_NODE_BUILTINS.has(spec) : !CORE_ALLOWED_PACKAGES.has(spec)) {
          problems.push(`${where}: core must stay pure, but imports ${spec}`);
        }
      }
    }
    if (layer === 'core') {
      const code = line.replace(/\/\/.*$/, '');
      if (/\bprocess\./.test(code)) problems.push(`${where}: core must not touch process`);
      if (/\bDate\.now\s*\(|new Date\(\s*\)|performance\.now\s*\(/.test(code)) {
        problems.push(`${where}: core must not read the clock (pass the time in)`);
      }
    }
  });
}
if (problems.length) {
  console.error(`import-direction check failed:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  process.exit(1);
}
console.log('import-direction check passed');
