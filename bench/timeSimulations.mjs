// `node --import tsx --import ./bench/timeSimulations.mjs bench/one.ts ...`: a module resolve hook that
// hands every importer of src/core/scheduling/simulator.ts the timed stand-in bench/timedSimulator.ts
// (which itself imports the real one). Registered after tsx, so it runs first and asks tsx to resolve.
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const standIn = new URL('./timedSimulator.ts', import.meta.url);
const real = new URL('../src/core/scheduling/simulator.ts', import.meta.url).pathname;
const pathOf = (url) => (url?.startsWith('file:') ? new URL(url).pathname : undefined);

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  // The stand-in's own import is the real simulator.
  if (pathOf(context.parentURL) === standIn.pathname) return resolved;
  return pathOf(resolved.url) === real ? { ...resolved, url: standIn.href } : resolved;
}

// Loaded once on the main thread (to register) and once on the hooks thread (for `resolve`).
if (isMainThread) register(import.meta.url);
