// A Balanced pool through the real consolidate Lambda (fake Kubernetes API, DynamoDB Local): the score
// metric in the EMF output and the ConsolidationApproved / ConsolidationRejected events it posts.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { demoNodePoolsPath } from '../../src/adapters/catalog/bundledPaths.ts';
import { createConsolidateHandler } from '../../src/handlers/consolidate.ts';
import type { PassResponse } from '../../src/handlers/pass.ts';
import { deps, jsonLines, lambdaContext, recordingActuator, resetWorld, scheduledEvent, startHarness, type Harness } from './harness.ts';

let h: Harness;
let balancedPools: string;
beforeAll(async () => {
  h = await startHarness();
  // The demo's NodePools with every pool Balanced.
  balancedPools = join(mkdtempSync(join(tmpdir(), 'ekc-balanced-')), 'nodepools.yaml');
  writeFileSync(balancedPools, readFileSync(demoNodePoolsPath, 'utf8').replaceAll('consolidationPolicy: WhenEmptyOrUnderutilized', 'consolidationPolicy: Balanced'));
});
afterAll(async () => {
  await h.close();
});
beforeEach(async () => {
  await resetWorld(h);
});

const KARPENTER_MESSAGE = /^score \d+\.\d\d (>=|<) threshold 0\.50 \(k: 2, savings \d+\.\d%, disruption \d+\.\d%\)$/;

describe('consolidate Lambda with Balanced pools', () => {
  it('posts ConsolidationApproved on the nodes of scored decisions and ConsolidationRejected on refused nodes', async () => {
    const handler = createConsolidateHandler(deps(h, { DRY_RUN: 'false', NODEPOOLS_SOURCE: `file:${balancedPools}` }, { actuator: recordingActuator().factory }));
    const response = (await handler(scheduledEvent, lambdaContext())) as PassResponse;

    const scoredNodes = response.decisions.filter((d) => d.scores !== undefined).flatMap((d) => d.nodes);
    const refusedNodes = (response.rejectedMoves ?? []).filter((m) => m.method === 'single-node').flatMap((m) => m.nodes);
    expect(scoredNodes.length).toBeGreaterThan(0);
    expect(refusedNodes.length).toBeGreaterThan(0);

    const posts = h.kube
      .mutatingRequests()
      .filter((r) => r.method === 'POST' && r.path === '/api/v1/namespaces/default/events')
      .map((r) => r.body as { reason: string; message: string; involvedObject: { kind: string; name: string } });
    const named = (reason: string) => posts.filter((p) => p.reason === reason);
    expect(named('ConsolidationApproved').map((p) => p.involvedObject.name).sort()).toEqual([...scoredNodes].sort());
    expect(named('ConsolidationRejected').map((p) => p.involvedObject.name).sort()).toEqual([...refusedNodes].sort());
    for (const p of [...named('ConsolidationApproved'), ...named('ConsolidationRejected')]) {
      expect(p.involvedObject.kind).toBe('Node');
      expect(p.message).toMatch(KARPENTER_MESSAGE);
    }
    // A refused node is not also reported as Unconsolidatable for the same reason.
    for (const p of named('Unconsolidatable')) expect(p.message).not.toContain('Balanced:');
  });

  it('emits karpenter_consolidation_score as value lists and karpenter_consolidation_moves_total as counts', async () => {
    const handler = createConsolidateHandler(deps(h, { NODEPOOLS_SOURCE: `file:${balancedPools}` }));
    const response = (await handler({ dryRun: true }, lambdaContext())) as PassResponse;
    const emf = jsonLines(h.lines).filter((r) => '_aws' in r);
    const scoreDocs = emf.filter((d) => 'karpenter_consolidation_score' in d);
    const values = scoreDocs.flatMap((d) => d['karpenter_consolidation_score'] as number[]);
    const expected = [...response.decisions.flatMap((d) => d.scores ?? []), ...(response.rejectedMoves ?? []).flatMap((m) => m.scores)].map((s) => s.score);
    expect(values.sort()).toEqual(expected.sort());
    for (const d of scoreDocs) expect(d).toMatchObject({ policy: 'Balanced', dry_run: 'true', cluster: expect.any(String) });
    const moves = emf.filter((d) => 'karpenter_consolidation_moves_total' in d).reduce((sum, d) => sum + (d['karpenter_consolidation_moves_total'] as number), 0);
    expect(moves).toBe(expected.length);
  });
});
