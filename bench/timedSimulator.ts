// The simulator as the whole pass sees it, timed: bench/timeSimulations.mjs makes every import of
// src/core/scheduling/simulator.ts (the pass's, runPass's, the projection's) load this module instead, so
// the benchmark measures the CLI's own code path (src/app/runPass.ts, which takes no simulator factory)
// and still knows how many pods the simulations placed and how long they took. The stopwatch around each
// simulation is all it adds.
import { performance } from 'node:perf_hooks';
import { createSimulator as createUntimed } from '../src/core/scheduling/simulator.ts';
import type { SimulatorInput, Simulator } from '../src/core/scheduling/types.ts';

export * from '../src/core/scheduling/simulator.ts';

/** Totals over every simulator built in this process. */
export const simulationTotals = { simulations: 0, podsPlaced: 0, simulationMs: 0 };

/** True once this module stands in for the simulator (bench/timeSimulations.mjs loaded). */
export const timedSimulatorModule = true;

export function createSimulator(input: SimulatorInput): Simulator {
  const inner = createUntimed(input);
  return {
    ...inner,
    simulate(request) {
      const start = performance.now();
      const result = inner.simulate(request);
      simulationTotals.simulationMs += performance.now() - start;
      simulationTotals.simulations += 1;
      simulationTotals.podsPlaced += result.placements.length;
      return result;
    },
  };
}
