// A seeded random source, so a replay with the same --seed gives the same numbers on any machine.
// mulberry32: 32-bit state, good enough for workload noise; not for anything secret.

export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  /** Exponentially distributed wait with the given mean (Poisson arrivals). */
  exponential(mean: number): number;
}

export function seededRandom(seed: number): Random {
  let state = (Math.floor(seed) >>> 0) ^ 0x9e3779b9;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.min(n - 1, Math.floor(next() * n)),
    exponential: (mean) => -Math.log(1 - next()) * mean,
  };
}
