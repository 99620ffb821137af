// The handler hands ACTUATOR and MAX_NODES_PER_COMMAND to the pass: the plan says which actuator acts on
// each pool, and no decision disrupts more nodes than the cap.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createConsolidateHandler } from '../../src/handlers/consolidate.ts';
import type { PassResponse } from '../../src/handlers/pass.ts';
import { deps, lambdaContext, resetWorld, startHarness, type Harness } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});
beforeEach(async () => {
  await resetWorld(h);
});

describe('pass settings from the configuration', () => {
  it('defaults: KARPENTER=absent (the harness) makes every pool in scope ec2; decisions as large as the budgets allow', async () => {
    const response = (await createConsolidateHandler(deps(h))({ dryRun: true }, lambdaContext())) as PassResponse;
    expect(Object.keys(response.actuators ?? {}).length).toBeGreaterThan(0);
    for (const a of Object.values(response.actuators ?? {})) expect(a).toEqual({ actuator: 'ec2', why: 'KARPENTER=absent' });
    expect(response.decisions.some((d) => d.nodes.length > 1)).toBe(true);
  });

  it('ACTUATOR=karpenter and MAX_NODES_PER_COMMAND=1 reach the plan', async () => {
    const response = (await createConsolidateHandler(deps(h, { ACTUATOR: 'karpenter', MAX_NODES_PER_COMMAND: '1' }))({ dryRun: true }, lambdaContext())) as PassResponse;
    const actuators = Object.values(response.actuators ?? {});
    expect(actuators.length).toBeGreaterThan(0);
    for (const a of actuators) expect(a.actuator).toBe('karpenter');
    expect(response.decisions.length).toBeGreaterThan(0);
    expect(response.decisions.every((d) => d.nodes.length === 1)).toBe(true);
  });
});
