// A small exact linear-program solver (two-phase simplex on a dense tableau; Dantzig's rule, with
// Bland's rule after a run of degenerate pivots so it cannot cycle). It is meant for the plan's lower
// bound (lowerBound.ts): a few hundred rows, a few thousand
// columns. No dependency: the npm solvers are native or WebAssembly builds that would weigh on the
// Lambda's bundle and cold start for a problem this small.
//
//   minimize  c . x   subject to  a_i . x  (>= | <= | =)  b_i  for every row i,  x >= 0.

export interface LinearRow {
  readonly coefficients: readonly number[];
  readonly sense: '>=' | '<=' | '=';
  readonly rhs: number;
}

export interface LinearProgram {
  readonly costs: readonly number[];
  readonly rows: readonly LinearRow[];
}

export type LinearSolution =
  | { readonly status: 'optimal'; readonly objective: number; readonly x: readonly number[] }
  | { readonly status: 'infeasible' }
  | { readonly status: 'unbounded' }
  /** Not solved within the iteration limit: no answer, never a wrong one (the caller gives no figure). */
  | { readonly status: 'stalled' };

const EPS = 1e-9;
/** The smallest entry a pivot is taken on. */
const PIVOT_EPS = 1e-7;
/** Degenerate pivots in a row before Bland's rule takes over. */
const BLAND_AFTER = 50;

export function solveLinearProgram(lp: LinearProgram, maxIterations = 50_000): LinearSolution {
  const n = lp.costs.length;
  const m = lp.rows.length;
  // Rows with a non-negative right-hand side; a `>=` row gets a surplus and an artificial column, a `<=`
  // row a slack (its first basis), an `=` row an artificial.
  const rows = lp.rows.map((r) => (r.rhs < 0 ? { coefficients: r.coefficients.map((v) => -v), sense: flip(r.sense), rhs: -r.rhs } : r));
  const slackCount = rows.filter((r) => r.sense !== '=').length;
  const artificialCount = rows.filter((r) => r.sense !== '<=').length;
  const width = n + slackCount + artificialCount; // columns before the right-hand side
  // One buffer for the whole tableau, each row a view of it: a few hundred separate typed arrays of a
  // few thousand entries cost more to allocate (and to account for in the garbage collector) than the
  // solve itself.
  const buffer = new Float64Array(m * (width + 1));
  const tableau: Float64Array[] = [];
  const basis: number[] = [];
  // Scratch for pivot(): the pivot row's non-zero columns.
  const nonZero = new Int32Array(width + 1);
  let slack = n;
  let artificial = n + slackCount;
  const artificialStart = n + slackCount;
  // Each row's non-zero columns at the start (the buffer starts as zeros; the rows are mostly zeros), so
  // that only they are written here and subtracted for phase 1 below.
  const startColumns: number[][] = [];
  for (const [i, r] of rows.entries()) {
    const row = buffer.subarray(i * (width + 1), (i + 1) * (width + 1));
    const used: number[] = [];
    for (let j = 0; j < n; j++) {
      const v = r.coefficients[j] ?? 0;
      if (v !== 0) {
        row[j] = v;
        used.push(j);
      }
    }
    row[width] = r.rhs;
    used.push(width);
    if (r.sense === '<=') {
      used.push(slack);
      row[slack] = 1;
      basis.push(slack++);
    } else {
      if (r.sense === '>=') {
        used.push(slack);
        row[slack++] = -1;
      }
      used.push(artificial);
      row[artificial] = 1;
      basis.push(artificial++);
    }
    tableau.push(row);
    startColumns.push(used);
  }

  const iterate = (objective: Float64Array, allowed: number): 'optimal' | 'unbounded' | 'stalled' => {
    // Dantzig's rule (the most negative reduced cost enters) takes far fewer pivots; after a run of
    // pivots that do not move the objective, Bland's rule (the lowest index) takes over, which cannot cycle.
    let degenerate = 0;
    for (let iteration = 0; iteration < maxIterations; iteration++) {
      const bland = degenerate >= BLAND_AFTER;
      let entering = -1;
      let mostNegative = -EPS;
      for (let j = 0; j < allowed; j++) {
        if (objective[j]! < mostNegative) {
          entering = j;
          if (bland) break;
          mostNegative = objective[j]!;
        }
      }
      if (entering < 0) return 'optimal';
      let leaving = -1;
      let best = Number.POSITIVE_INFINITY;
      for (let i = 0; i < m; i++) {
        const a = tableau[i]![entering]!;
        // A pivot on a near-zero entry multiplies the rounding errors of every row by its inverse: after
        // a few thousand such pivots the tableau no longer describes the problem and the solve wanders.
        if (a <= PIVOT_EPS) continue;
        // A right-hand side a rounding error took just below zero is zero.
        const ratio = Math.max(0, tableau[i]![width]!) / a;
        const tie = Math.abs(ratio - best) <= EPS;
        // Among tied rows: Bland's lowest index (so it cannot cycle), else the largest pivot (the most
        // accurate one).
        if (ratio < best - EPS || (tie && (bland ? basis[i]! < basis[leaving]! : a > tableau[leaving]![entering]!))) {
          best = ratio;
          leaving = i;
        }
      }
      if (leaving < 0) return 'unbounded';
      degenerate = best <= EPS ? degenerate + 1 : 0;
      pivot(tableau, objective, leaving, entering, width, nonZero);
      basis[leaving] = entering;
    }
    return 'stalled';
  };

  // Phase 1: drive the artificials out (minimize their sum).
  if (artificialCount > 0) {
    const phase1 = new Float64Array(width + 1);
    for (let j = artificialStart; j < width; j++) phase1[j] = 1;
    // Minus every row whose basis is an artificial: the other columns of the row are zeros.
    for (let i = 0; i < m; i++) {
      if (basis[i]! < artificialStart) continue;
      const row = tableau[i]!;
      for (const j of startColumns[i]!) phase1[j] = phase1[j]! - row[j]!;
    }
    const status = iterate(phase1, width);
    if (status === 'stalled') return { status: 'stalled' };
    if (status !== 'optimal' || -phase1[width]! > 1e-7 * Math.max(1, ...rows.map((r) => Math.abs(r.rhs)))) return { status: 'infeasible' };
    // An artificial left basic at zero is pivoted out on any real column of its row (or the row is redundant).
    for (let i = 0; i < m; i++) {
      if (basis[i]! < artificialStart) continue;
      const j = firstNonZeroColumn(tableau[i]!, artificialStart);
      if (j >= 0) {
        pivot(tableau, phase1, i, j, width, nonZero);
        basis[i] = j;
      }
    }
  }

  // Phase 2: the real costs, artificial columns barred from entering.
  const objective = new Float64Array(width + 1);
  for (let j = 0; j < n; j++) objective[j] = lp.costs[j]!;
  for (let i = 0; i < m; i++) {
    const j = basis[i]!;
    if (j < n && objective[j] !== 0) subtractRow(objective, tableau[i]!, objective[j]!);
  }
  const status = iterate(objective, artificialStart);
  if (status === 'unbounded') return { status: 'unbounded' };
  if (status === 'stalled') return { status: 'stalled' };
  const x = new Array<number>(n).fill(0);
  for (let i = 0; i < m; i++) if (basis[i]! < n) x[basis[i]!] = tableau[i]![width]!;
  const value = x.reduce((sum, v, j) => sum + v * lp.costs[j]!, 0);
  return { status: 'optimal', objective: value, x };
}

/** The first of the columns before `end` whose entry is not (nearly) zero, or -1. */
function firstNonZeroColumn(row: Float64Array, end: number): number {
  for (let j = 0; j < end; j++) if (Math.abs(row[j]!) > EPS) return j;
  return -1;
}

function flip(sense: LinearRow['sense']): LinearRow['sense'] {
  return sense === '>=' ? '<=' : sense === '<=' ? '>=' : '=';
}

function subtractRow(target: Float64Array, row: Float64Array, factor: number): void {
  for (let j = 0; j < target.length; j++) target[j] = target[j]! - factor * row[j]!;
}

/**
 * Divides the leaving row by the pivot and subtracts it from every other row. Only the columns where
 * the pivot row is non-zero are touched: elsewhere `x - factor * 0` is `x`, so the tableau comes out
 * the same as with whole rows (up to the sign of a zero, which no comparison here sees). The lower
 * bound's rows are mostly zeros, so this does a small part of the work of a whole-row pivot.
 */
function pivot(tableau: Float64Array[], objective: Float64Array, leaving: number, entering: number, width: number, nonZero: Int32Array): void {
  const row = tableau[leaving]!;
  const p = row[entering]!;
  let count = 0;
  for (let j = 0; j <= width; j++) {
    const v = row[j]! / p;
    row[j] = v;
    if (v !== 0) nonZero[count++] = j;
  }
  for (let i = 0; i < tableau.length; i++) {
    if (i === leaving) continue;
    const target = tableau[i]!;
    const factor = target[entering]!;
    if (factor !== 0) subtractColumns(target, row, factor, nonZero, count);
  }
  const factor = objective[entering]!;
  if (factor !== 0) subtractColumns(objective, row, factor, nonZero, count);
}

function subtractColumns(target: Float64Array, row: Float64Array, factor: number, columns: Int32Array, count: number): void {
  for (let k = 0; k < count; k++) {
    const j = columns[k]!;
    target[j] = target[j]! - factor * row[j]!;
  }
}
