// The interruption function as serverless.yml declares it: the timeout a spot deadline needs, the same
// role as the other functions, and EventBridge rules whose patterns route each recorded event
// (test/fixtures/events/) to it through exactly one rule and leave the rest alone. The compiled rules
// are checked in infra.test.ts, which packages the service once for every packaging test.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.ts';
import { SPOT_NOTICE_MS } from '../../src/core/interruption/notice.ts';
import { matchesEventPattern } from '../support/eventPattern.ts';

const root = join(import.meta.dirname, '..', '..');
// Only the functions and provider sections are read here (plain YAML): CloudFormation's short tags
// elsewhere are left unresolved.
const serverless = parse(readFileSync(join(root, 'serverless.yml'), 'utf8'), { logLevel: 'silent' }) as Record<string, any>;
const fn = serverless['functions']['interruption'];
const fixture = (name: string) => JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'events', `${name}.json`), 'utf8')) as Record<string, unknown>;
const patterns = (fn.events as { eventBridge: { pattern: Record<string, unknown> } }[]).map((e) => e.eventBridge.pattern);

describe('the interruption function in serverless.yml', () => {
  it('is on the shared module, with a timeout that outlasts a spot warning, and the role of the others', async () => {
    expect(fn).toMatchObject({ handler: 'src/handlers/index.interruption', timeout: 150, maximumRetryAttempts: 2 });
    expect(fn.environment.FUNCTION_TIMEOUT_SECONDS).toBe(String(fn.timeout));
    // Two minutes of notice plus the cold start and the last eviction round.
    expect(fn.timeout * 1000).toBeGreaterThan(SPOT_NOTICE_MS);
    expect(fn.role).toBeUndefined();
    expect(fn.iam).toBeUndefined();
    const module = (await import('../../src/handlers/index.ts')) as Record<string, unknown>;
    expect(typeof module['interruption']).toBe('function');
  });

  it('loads its configuration with the deployed environment (the lease default outlives its timeout)', () => {
    const env = { ...serverless['provider']['environment'], ...fn.environment, CLUSTER_NAME: 'prod-eks', AWS_REGION: 'us-east-1', TABLE_NAME: 'eks-consolidator-prod-state', NODEPOOLS_SOURCE: 'kubernetes', FEATURE_GATES: '', DRY_RUN: 'false', LOG_LEVEL: 'info', ACTUATOR: 'auto' };
    const config = loadConfig(env, '/var/task');
    expect(config.functionTimeoutMs).toBe(150_000);
    expect(config.leaseTtlMs).toBeGreaterThan(150_000);
  });

  it.each(['spot-interruption-warning', 'rebalance-recommendation', 'state-change-terminated', 'health-scheduled-change'])('routes the recorded %s through exactly one rule', (name) => {
    expect(patterns.filter((p) => matchesEventPattern(p, fixture(name)))).toHaveLength(1);
  });

  it('routes nothing else: running or pending instances, other services, Health issues, Auto Scaling', () => {
    const spot = fixture('spot-interruption-warning');
    const stateChange = fixture('state-change-terminated');
    const health = fixture('health-scheduled-change');
    const others = [
      { ...stateChange, detail: { ...(stateChange['detail'] as object), state: 'running' } },
      { ...stateChange, detail: { ...(stateChange['detail'] as object), state: 'pending' } },
      { ...health, detail: { ...(health['detail'] as object), service: 'RDS', eventTypeCode: 'AWS_RDS_MAINTENANCE_SCHEDULED' } },
      { ...health, detail: { ...(health['detail'] as object), eventTypeCategory: 'issue' } },
      { ...spot, source: 'aws.autoscaling', 'detail-type': 'EC2 Instance-terminate Lifecycle Action' },
    ];
    for (const event of others) expect(patterns.filter((p) => matchesEventPattern(p, event))).toEqual([]);
  });
});
