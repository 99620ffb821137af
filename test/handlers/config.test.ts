// The configuration is read once from the environment; every bad value is an error naming the variable.
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type Env } from '../../src/app/config.ts';
import { createConsolidateHandler } from '../../src/handlers/consolidate.ts';
import { captureStdout } from '../support/stdout.ts';

const base: Env = { CLUSTER_NAME: 'prod-eks', AWS_REGION: 'eu-west-1', TABLE_NAME: 'eks-consolidator-prod-state' };

function errorOf(env: Env): ConfigError {
  try {
    loadConfig(env, '/var/task');
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('has safe defaults', () => {
    const config = loadConfig(base, '/var/task');
    expect(config).toEqual({
      clusterName: 'prod-eks',
      region: 'eu-west-1',
      tableName: 'eks-consolidator-prod-state',
      clusterSource: { kind: 'eks' },
      nodePoolsSource: { kind: 'kubernetes' },
      gates: { spotToSpotConsolidation: false },
      replacementBound: { scale: 2 },
      planWaves: 'default',
      dryRun: true,
      catalogMaxAgeMs: 12 * 3_600_000,
      leaseTtlMs: 360_000,
      functionTimeoutMs: 300_000,
      replacementReadyTimeoutMs: 600_000,
      drainTimeoutMs: 3_600_000,
      karpenter: 'auto',
      actuator: 'auto',
      maxNodesPerCommand: 100,
      preferencePolicy: 'Respect',
      logLevel: 'info',
    });
  });

  it.each([
    ['equal to the timeout', { FUNCTION_TIMEOUT_SECONDS: '300', LEASE_TTL_SECONDS: '300' }],
    ['shorter than the timeout', { FUNCTION_TIMEOUT_SECONDS: '120', LEASE_TTL_SECONDS: '30' }],
    ['shorter than the default timeout', { LEASE_TTL_SECONDS: '120' }],
  ])('refuses a lease TTL %s: it could expire under a live pass', (_name, vars) => {
    expect(() => loadConfig({ ...base, ...vars }, '/var/task')).toThrow(/LEASE_TTL_SECONDS: .* must be longer than the function timeout/);
  });

  it('derives the lease TTL from the declared function timeout', () => {
    expect(loadConfig({ ...base, FUNCTION_TIMEOUT_SECONDS: '120' }, '/var/task')).toMatchObject({ functionTimeoutMs: 120_000, leaseTtlMs: 180_000 });
  });

  it.each([
    ['a dry run projects later waves by default', { DRY_RUN: 'true' }, 'default'],
    ['an acting pass does not by default (the actuator uses none)', { DRY_RUN: 'false' }, 0],
    ['off turns it off', { PLAN_WAVES: 'off' }, 0],
    ['a number of waves, acting too', { DRY_RUN: 'false', PLAN_WAVES: '12' }, 12],
  ] as const)('PLAN_WAVES: %s', (_name, vars, expected) => {
    expect(loadConfig({ ...base, ...vars }, '/var/task').planWaves).toBe(expected);
  });

  it('reads every variable', () => {
    const config = loadConfig(
      {
        ...base,
        DRY_RUN: 'FALSE',
        FEATURE_GATES: 'SpotToSpotConsolidation=true',
        NODEPOOLS_SOURCE: 'file:config/nodepools.yaml',
        CATALOG_MAX_AGE_HOURS: '6',
        FUNCTION_TIMEOUT_SECONDS: '100',
        LEASE_TTL_SECONDS: '120',
        REPLACEMENT_READY_TIMEOUT_SECONDS: '900',
        DRAIN_TIMEOUT_SECONDS: '1800',
        DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
        LOG_LEVEL: 'debug',
        PLAN_WAVES: '4',
        ACTUATOR: 'Karpenter',
        MAX_NODES_PER_COMMAND: '25',
        PREFERENCE_POLICY: 'ignore',
      },
      '/var/task',
    );
    expect(config).toMatchObject({
      dryRun: false,
      planWaves: 4,
      actuator: 'karpenter',
      maxNodesPerCommand: 25,
      preferencePolicy: 'Ignore',
      gates: { spotToSpotConsolidation: true },
      nodePoolsSource: { kind: 'file', path: '/var/task/config/nodepools.yaml' },
      catalogMaxAgeMs: 6 * 3_600_000,
      leaseTtlMs: 120_000,
      functionTimeoutMs: 100_000,
      replacementReadyTimeoutMs: 900_000,
      drainTimeoutMs: 1_800_000,
      dynamoDbEndpoint: 'http://127.0.0.1:8000',
      logLevel: 'debug',
    });
    expect(loadConfig({ ...base, CLUSTER_SOURCE: 'file:/data/cluster.json', NODEPOOLS_SOURCE: 'file:np.yaml' }, '/x').clusterSource).toEqual({
      kind: 'file',
      path: '/data/cluster.json',
    });
  });

  it.each([
    [{ CLUSTER_NAME: undefined }, 'CLUSTER_NAME', /is required but not set/],
    [{ CLUSTER_NAME: '  ' }, 'CLUSTER_NAME', /is required/],
    [{ CLUSTER_NAME: 'my cluster' }, 'CLUSTER_NAME', /not an EKS cluster name/],
    [{ AWS_REGION: undefined }, 'AWS_REGION', /is required/],
    [{ AWS_REGION: 'Ireland' }, 'AWS_REGION', /not an AWS region/],
    [{ TABLE_NAME: undefined }, 'TABLE_NAME', /is required/],
    [{ TABLE_NAME: 'a/b' }, 'TABLE_NAME', /not a DynamoDB table name/],
    [{ DRY_RUN: 'yes' }, 'DRY_RUN', /"yes" is not true or false/],
    [{ FEATURE_GATES: 'SpotToSpot=true' }, 'FEATURE_GATES', /unknown feature gate "SpotToSpot"/],
    [{ FEATURE_GATES: 'SpotToSpotConsolidation' }, 'FEATURE_GATES', /is not NAME=true\|false/],
    [{ NODEPOOLS_SOURCE: 's3://bucket/pools.yaml' }, 'NODEPOOLS_SOURCE', /neither `kubernetes` nor file:<path>/],
    [{ NODEPOOLS_SOURCE: 'file:' }, 'NODEPOOLS_SOURCE', /needs a path/],
    [{ CLUSTER_SOURCE: 'kubeconfig' }, 'CLUSTER_SOURCE', /neither `eks` nor file:<path>/],
    [{ CLUSTER_SOURCE: 'file:c.json' }, 'NODEPOOLS_SOURCE', /no API to read NodePools from/],
    [{ CLUSTER_SOURCE: 'file:c.json', NODEPOOLS_SOURCE: 'file:n.yaml', DRY_RUN: 'false' }, 'DRY_RUN', /cannot be acted on/],
    [{ CATALOG_MAX_AGE_HOURS: 'twelve' }, 'CATALOG_MAX_AGE_HOURS', /not a number/],
    [{ LEASE_TTL_SECONDS: '10' }, 'LEASE_TTL_SECONDS', /outside 30\.\.3600/],
    [{ LEASE_TTL_SECONDS: '90.5' }, 'LEASE_TTL_SECONDS', /not a whole number/],
    [{ REPLACEMENT_READY_TIMEOUT_SECONDS: '-1' }, 'REPLACEMENT_READY_TIMEOUT_SECONDS', /not a whole number/],
    [{ DYNAMODB_ENDPOINT: '127.0.0.1:8000' }, 'DYNAMODB_ENDPOINT', /not an http\(s\) URL/],
    [{ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL', /not debug, info, warn or error/],
    [{ PLAN_WAVES: 'many' }, 'PLAN_WAVES', /"many" is not a number of waves from 0 to 100/],
    [{ PLAN_WAVES: '101' }, 'PLAN_WAVES', /is not a number of waves/],
    [{ ACTUATOR: 'fleet' }, 'ACTUATOR', /"fleet" is not auto, karpenter or ec2/],
    [{ MAX_NODES_PER_COMMAND: '0' }, 'MAX_NODES_PER_COMMAND', /"0" is not a positive whole number of nodes/],
    [{ MAX_NODES_PER_COMMAND: '2.5' }, 'MAX_NODES_PER_COMMAND', /"2.5" is not a positive whole number/],
    [{ MAX_NODES_PER_COMMAND: 'all' }, 'MAX_NODES_PER_COMMAND', /"all" is not a positive whole number/],
    [{ PREFERENCE_POLICY: 'Prefer' }, 'PREFERENCE_POLICY', /"Prefer" is not Respect or Ignore/],
  ] as const)('%o is refused, naming %s', (change, variable, problem) => {
    const error = errorOf({ ...base, ...change });
    expect(error.variable).toBe(variable);
    expect(error.message).toMatch(new RegExp(`^configuration: ${variable}: `));
    expect(error.message).toMatch(problem);
  });
});

describe('a handler with a bad configuration', () => {
  it('logs the problem once at cold start and fails every invocation with it, doing nothing', async () => {
    const lines: string[] = [];
    const release = captureStdout(lines);
    try {
      const handler = createConsolidateHandler({ env: { ...base, LEASE_TTL_SECONDS: 'soon' } });
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({
        level: 'ERROR',
        service: 'eks-consolidator',
        function: 'consolidate',
        variable: 'LEASE_TTL_SECONDS',
        message: expect.stringContaining('LEASE_TTL_SECONDS: "soon" is not a whole number'),
      });
      const context = { awsRequestId: 'r1', functionName: 'f', getRemainingTimeInMillis: () => 60_000 } as Context;
      await expect(handler({ dryRun: true }, context)).rejects.toThrow('configuration: LEASE_TTL_SECONDS: "soon" is not a whole number');
      await expect(handler({ dryRun: true }, context)).rejects.toBeInstanceOf(ConfigError);
      // Each failed invocation counts as an error (no cluster dimension: the configuration is what failed).
      const errors = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => 'eks_consolidator_pass_errors_total' in r);
      expect(errors).toHaveLength(2);
      expect(errors[0]).toMatchObject({ service: 'eks-consolidator', function: 'consolidate', eks_consolidator_pass_errors_total: 1 });
    } finally {
      release();
    }
  });
});
