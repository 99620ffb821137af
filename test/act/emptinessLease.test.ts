// The emptiness function (every minute) and the consolidation function share the pass lease. While a
// command waits (pods behind a PodDisruptionBudget, a replacement joining), an emptiness invocation
// moves it one step and returns: it does not hold the lease through its run, which would keep the
// consolidation function out for as long as the drain lasts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { executePlan } from '../../src/app/act/executeCommands.ts';
import { createActuator, type ActuatorParts } from '../../src/app/wiring.ts';
import type { Config } from '../../src/app/config.ts';
import { kubeDaemonSet, kubeNode, kubePod } from '../support/fakeKubeApi.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { FAST, deleteDecision, passResult, startWorld, type World } from './harness.ts';
import type { Logger } from '@aws-lambda-powertools/logger';

const OLD = 'ip-10-1-1-7.ec2.internal';
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

const quietLog = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined } as unknown as Logger;

describe('the emptiness function and the shared lease', () => {
  it.each([
    ['emptiness', 0],
    ['consolidation', 9],
  ] as const)('a %s invocation with a drain waiting sleeps %i times while it holds the lease (120 s left, 10 s polls, a 30 s margin)', async (scope, expectedSleeps) => {
    const w = (world = await startWorld(db, [kubeDaemonSet('kube-system', 'aws-node'), kubeNode(OLD), kubePod('default', 'web-1', { node: OLD })]));
    w.api.setEvictionPolicy('blockByPdb');
    await executePlan(passResult([deleteDecision([OLD], 'single-node')]), w.deps(MINUTE), { ...FAST, maxWaitMs: 0 });
    w.clock.nowMs += MINUTE;

    const base = w.deps(120_000);
    const sleeps: number[] = [];
    const parts: ActuatorParts = {
      config: { replacementReadyTimeoutMs: 10 * MINUTE, drainTimeoutMs: 60 * MINUTE, leaseTtlMs: 3 * MINUTE } as Config,
      store: w.store,
      nodes: base.nodes,
      instances: base.instances,
      loadNodePools: base.loadNodePools!,
      readWorld: base.readWorld,
      clock: () => w.clock.nowMs,
    };
    const owner = `${scope}-invocation`;
    expect(await w.store.acquireLease(owner, w.clock.nowMs, 3 * MINUTE)).toBe(true);
    const deadline = w.clock.nowMs + 120_000;
    const session = createActuator({
      sleep: async (ms) => {
        sleeps.push(ms);
        w.clock.nowMs += ms;
      },
      options: { pollIntervalMs: 10_000, marginMs: 30_000 },
    })(parts).begin({ owner, scope, nowMs: w.clock.nowMs, deadlineMs: deadline, remainingMs: () => deadline - w.clock.nowMs, log: quietLog });
    await session.resume();
    await session.act(undefined);
    expect(sleeps.length).toBe(expectedSleeps);
    const [cmd] = await w.commands();
    expect(cmd?.step).toBe('evicting');
  });
});
