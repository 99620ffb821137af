// The consolidation pass's cleanup of orphaned taints (executeCommands.ts) lifts only its own
// disrupting taint, from nodes one of its commands marked: the interruption function's taint, which
// keeps pods off a node whose instance is going away, is never removed by it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { actOnPass } from '../../src/app/act/executeCommands.ts';
import { DisruptingTaint, InterruptedTaint } from '../../src/core/model/types.ts';
import { COMMAND_ANNOTATION } from '../../src/core/ports/actuator.ts';
import { kubeNode } from '../support/fakeKubeApi.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { FAST, nodeSpec, passResult, startWorld, type World } from './harness.ts';

/** Tainted by a consolidation command whose record is lost, and by the interruption function. */
const BOTH = 'ip-10-3-1-7.ec2.internal';
/** Tainted and cordoned by the interruption function only (no command annotation). */
const INTERRUPTED = 'ip-10-3-1-8.ec2.internal';
const MINUTE = 60_000;

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

const taintJson = (t: { key: string; effect: string }) => ({ key: t.key, effect: t.effect });

describe('orphaned-taint cleanup next to an interrupted node', () => {
  it('removes its own disrupting taint and never the interrupted one', async () => {
    const both = kubeNode(BOTH, { taints: [taintJson(DisruptingTaint), taintJson(InterruptedTaint)], unschedulable: true });
    (both['metadata'] as Record<string, unknown>)['annotations'] = { [COMMAND_ANNOTATION]: 'cmd-lost-with-the-table' };
    const interrupted = kubeNode(INTERRUPTED, { taints: [taintJson(InterruptedTaint)], unschedulable: true });
    world = await startWorld(db, [both, interrupted]);
    const result = { ...passResult([]), cluster: await world.cluster() };

    const report = await actOnPass(result, world.deps(MINUTE), FAST);

    expect(report.cleanedTaints).toEqual([BOTH]);
    expect(nodeSpec(world.api, BOTH)?.taints).toEqual([taintJson(InterruptedTaint)]);
    // The node carrying only the interrupted taint is not written at all.
    expect(world.api.mutatingRequests().filter((r) => r.path === `/api/v1/nodes/${INTERRUPTED}`)).toEqual([]);
    expect(nodeSpec(world.api, INTERRUPTED)).toEqual({ taints: [taintJson(InterruptedTaint)], unschedulable: true, providerID: expect.any(String) });
  });
});
