// A pass's work counted in what it simulates rather than in time, so that a bound on it (a plan's later
// waves, laterWaves.ts) gives the same plan on any machine.
import type { Simulator, SimulatorInput } from '../scheduling/types.ts';
import { podCount } from '../scheduling/clusterChange.ts';

export interface Work {
  simulations: number;
  /** Pods the simulations placed, or failed to. */
  podsSimulated: number;
  /** Pods indexed building simulators (each build indexes the whole cluster). */
  podsIndexed: number;
}

export const newWork = (): Work => ({ simulations: 0, podsSimulated: 0, podsIndexed: 0 });

/** Work in one number: pods simulated plus pods indexed. */
export const workUnits = (work: Readonly<Work>): number => work.podsSimulated + work.podsIndexed;

/** `factory`, adding what every simulator it builds does to `work`. */
export function countingFactory(factory: (input: SimulatorInput) => Simulator, work: Work): (input: SimulatorInput) => Simulator {
  return (input) => {
    const inner = factory(input);
    work.podsIndexed += podCount(input.cluster);
    return {
      simulate: (request) => {
        const result = inner.simulate(request);
        work.simulations += 1;
        work.podsSimulated += result.placements.length + result.unschedulable.length;
        return result;
      },
    };
  };
}
