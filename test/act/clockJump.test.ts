// The Ready and drain deadlines are measured on each command's own clock (commandRunner.ts `clock`),
// which follows the wall clock between looks but never goes back and moves at most 15 minutes per look:
// a host whose clock jumps a day ahead, or back, neither ends an hour's drain at once nor keeps it alive
// for a day.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { executePlan, resumeCommands } from '../../src/app/act/executeCommands.ts';
import { MAX_CLOCK_STEP_MS } from '../../src/app/act/commandRunner.ts';
import { kubeDaemonSet, kubeNode, kubePod } from '../support/fakeKubeApi.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { FAST, deleteDecision, nodeSpec, passResult, startWorld, type World } from './harness.ts';

const OLD = 'ip-10-1-1-7.ec2.internal';
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

let db: LocalDynamo;
let world: World | undefined;
beforeAll(async () => {
  db = await startDynalite();
});
afterAll(async () => {
  await db.stop();
});
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** A delete whose only pod a PodDisruptionBudget never lets go: a drain that can only time out. */
async function blockedDrain(): Promise<World> {
  const w = (world = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), kubeNode(OLD), kubePod('default', 'web-1', { node: OLD })]));
  w.api.setEvictionPolicy('blockByPdb');
  const first = await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(MINUTE), { ...FAST, maxWaitMs: 0 });
  expect(first.commands[0]!.step).toBe('evicting');
  return w;
}

async function pass(w: World, stepMs: number) {
  w.clock.nowMs += stepMs;
  return (await resumeCommands(w.deps(MINUTE), { ...FAST, maxWaitMs: 0 })).commands[0];
}

describe('deadlines and clock jumps', () => {
  it('a pass on a host a day ahead does not end an hour-long drain', async () => {
    const w = await blockedDrain();
    await pass(w, 5 * MINUTE);
    expect((await pass(w, DAY))?.step).toBe('evicting');
    // Back to the true time: the drain goes on, and ends after about an hour of passes.
    expect((await pass(w, -DAY + 5 * MINUTE))?.step).toBe('evicting');
    let passes = 0;
    let last;
    do {
      last = await pass(w, 5 * MINUTE);
      passes += 1;
    } while (last?.step !== 'abandoned' && passes < 30);
    expect(last?.step).toBe('abandoned');
    // 5 + 15 (the jump, capped) + 0 (the way back) + 5 per pass: 60 minutes reached at pass 8.
    expect(passes).toBe(8);
    expect(nodeSpec(w.api, OLD)?.unschedulable).toBeUndefined();
  });

  it('a pass on a host a day behind does not keep a stuck drain alive for a day', async () => {
    const w = await blockedDrain();
    expect((await pass(w, -DAY))?.step).toBe('evicting');
    let passes = 0;
    let last;
    do {
      last = await pass(w, 5 * MINUTE);
      passes += 1;
    } while (last?.step !== 'abandoned' && passes < 40);
    // The first pass back on time counts at most the cap; then 5 minutes a pass.
    expect(last?.step).toBe('abandoned');
    expect(passes).toBeLessThanOrEqual(12);
  });

  it('the cap is what a jump can count', () => {
    expect(MAX_CLOCK_STEP_MS).toBe(15 * MINUTE);
  });
});
