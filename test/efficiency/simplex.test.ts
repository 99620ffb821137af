import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { solveLinearProgram, type LinearProgram } from '../../src/core/efficiency/simplex.ts';

const row = (coefficients: number[], sense: '>=' | '<=' | '=', rhs: number) => ({ coefficients, sense, rhs });

describe('simplex', () => {
  it.each([
    // [name, program, optimum]
    ['covering: min 2x+3y, x+y>=4, x+3y>=6', { costs: [2, 3], rows: [row([1, 1], '>=', 4), row([1, 3], '>=', 6)] }, 9],
    ['an upper bound binds: min -x-y, x<=3, y<=2', { costs: [-1, -1], rows: [row([1, 0], '<=', 3), row([0, 1], '<=', 2)] }, -5],
    ['equality: min x+2y, x+y=5, x<=2', { costs: [1, 2], rows: [row([1, 1], '=', 5), row([1, 0], '<=', 2)] }, 8],
    ['negative right-hand side: min x, -x<=-7', { costs: [1], rows: [row([-1], '<=', -7)] }, 7],
    ['degenerate rows', { costs: [1, 1, 1], rows: [row([1, 1, 0], '>=', 1), row([1, 1, 0], '>=', 1), row([0, 1, 1], '>=', 1), row([1, 0, 1], '>=', 1)] }, 1.5],
    ['nothing to cover', { costs: [1, 1], rows: [row([1, 1], '>=', 0)] }, 0],
  ] as [string, LinearProgram, number][])('%s', (_name, lp, optimum) => {
    const solution = solveLinearProgram(lp);
    expect(solution.status).toBe('optimal');
    if (solution.status !== 'optimal') return;
    expect(solution.objective).toBeCloseTo(optimum, 9);
    for (const r of lp.rows) {
      const lhs = r.coefficients.reduce((s, a, j) => s + a * solution.x[j]!, 0);
      if (r.sense === '>=') expect(lhs).toBeGreaterThanOrEqual(r.rhs - 1e-9);
      if (r.sense === '<=') expect(lhs).toBeLessThanOrEqual(r.rhs + 1e-9);
      if (r.sense === '=') expect(lhs).toBeCloseTo(r.rhs, 9);
    }
  });

  it('says infeasible and unbounded', () => {
    expect(solveLinearProgram({ costs: [1], rows: [row([1], '>=', 5), row([1], '<=', 3)] }).status).toBe('infeasible');
    expect(solveLinearProgram({ costs: [-1], rows: [row([1], '>=', 1)] }).status).toBe('unbounded');
  });

  it('agrees with brute force over the vertices of random 2-variable covering problems', () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let t = 0; t < 50; t++) {
      const rows = Array.from({ length: 3 }, () => row([0.1 + rand() * 4, 0.1 + rand() * 4], '>=', rand() * 10));
      const costs = [0.1 + rand(), 0.1 + rand()];
      const solution = solveLinearProgram({ costs, rows });
      // Vertices: intersections of pairs of row lines and the axes.
      const lines = [...rows.map((r) => [r.coefficients[0]!, r.coefficients[1]!, r.rhs]), [1, 0, 0], [0, 1, 0]];
      let best = Number.POSITIVE_INFINITY;
      for (let i = 0; i < lines.length; i++) {
        for (let k = i + 1; k < lines.length; k++) {
          const [a, b, c] = lines[i]!;
          const [d, e, f] = lines[k]!;
          const det = a! * e! - b! * d!;
          if (Math.abs(det) < 1e-12) continue;
          const x = (c! * e! - b! * f!) / det;
          const y = (a! * f! - c! * d!) / det;
          if (x < -1e-9 || y < -1e-9) continue;
          if (rows.every((r) => r.coefficients[0]! * x + r.coefficients[1]! * y >= r.rhs - 1e-9)) best = Math.min(best, costs[0]! * x + costs[1]! * y);
        }
      }
      expect(solution.status === 'optimal' && solution.objective).toBeCloseTo(best, 7);
    }
  });
});

describe('simplex on a lower bound that once wandered', () => {
  // The lower bound of a replayed demo cluster after a day of restarts (1,022 columns, 336 rows): with
  // pivots taken on entries as small as 1e-9 the rounding errors grew until the solve ran out of
  // iterations (34 s) and the replay stopped with an internal error. The optimum was checked with an
  // independent solver (HiGHS): 2.355375346133135.
  const sparse = JSON.parse(readFileSync(new URL('../fixtures/lower-bound-lp-ill-conditioned.json', import.meta.url), 'utf8')) as {
    costs: number[];
    rows: { sense: '>=' | '<=' | '='; rhs: number; terms: [number, number][] }[];
  };
  const lp: LinearProgram = {
    costs: sparse.costs,
    rows: sparse.rows.map((r) => {
      const coefficients = new Array<number>(sparse.costs.length).fill(0);
      for (const [j, v] of r.terms) coefficients[j] = v;
      return { coefficients, sense: r.sense, rhs: r.rhs };
    }),
  };

  it('solves it to the independent optimum, every row holding', () => {
    const solution = solveLinearProgram(lp);
    expect(solution.status).toBe('optimal');
    if (solution.status !== 'optimal') return;
    expect(solution.objective).toBeCloseTo(2.355375346133135, 9);
    for (const r of lp.rows) {
      const lhs = r.coefficients.reduce((s, a, j) => s + a * solution.x[j]!, 0);
      if (r.sense === '>=') expect(lhs).toBeGreaterThanOrEqual(r.rhs - 1e-6);
      if (r.sense === '<=') expect(lhs).toBeLessThanOrEqual(r.rhs + 1e-6);
    }
  });

  it('out of iterations it says so (no figure), it does not throw', () => {
    expect(solveLinearProgram(lp, 10).status).toBe('stalled');
  });
});
