// A seeded random source, so a replay with the same --seed gives the same numbers on any machine.
// mulberry32 (../random.ts) under a fixed salt, with the draws a replay needs.
import { mulberry32 } from '../random.ts';

export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  /** Exponentially distributed wait with the given mean (Poisson arrivals). */
  exponential(mean: number): number;
}

export function seededRandom(seed: number): Random {
  const next = mulberry32((Math.floor(seed) >>> 0) ^ 0x9e3779b9);
  return {
    next,
    int: (n) => Math.min(n - 1, Math.floor(next() * n)),
    exponential: (mean) => -Math.log(1 - next()) * mean,
  };
}
