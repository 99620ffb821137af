// The deployment descriptions agree with each other and with the code: serverless.yml, infra/table.yml
// and stateTableCloudFormation() describe one table; serverless.yml and infra/iam.yml one policy;
// infra/rbac.yaml grants what the Kubernetes adapters call, and nothing that deletes pods.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse, parseAllDocuments, type Tags } from 'yaml';
import { loadConfig } from '../../src/app/config.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ec2InstanceLauncher } from '../../src/adapters/aws/ec2Launcher.ts';
import { FakeEc2, POOL, replaceDecision } from '../act/harness.ts';
import { createFleetAuthorizations, type LaunchTemplateFacts } from '../support/ec2Authorizations.ts';
import { evaluate, type PolicyDocument } from '../support/iamPolicy.ts';
import { stateTableCloudFormation } from '../../src/adapters/dynamodb/tableSchema.ts';
import { LISTED_RESOURCES } from '../../src/adapters/kubernetes/liveClusterSource.ts';

const execFileAsync = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

// CloudFormation's short-form intrinsics, as plain objects.
const cfnTags: Tags = ['Ref', 'Sub', 'GetAtt', 'Equals'].map((name) => ({
  tag: `!${name}`,
  identify: () => false,
  resolve: (value: unknown) => ({ [name === 'Ref' ? 'Ref' : `Fn::${name}`]: value }),
}));
const cfnSeqTags: Tags = ['Sub', 'Equals'].map((name) => ({
  tag: `!${name}`,
  collection: 'seq' as const,
  identify: () => false,
  resolve: (value: unknown) => ({ [`Fn::${name}`]: (value as { toJSON(): unknown }).toJSON() }),
}));
const yamlOf = (path: string) => parse(read(path), { customTags: [...cfnTags, ...cfnSeqTags] }) as Record<string, any>;

/** Renders the intrinsics of both files into one string form, with sample values for parameters. */
function render(value: unknown): unknown {
  const samples: Record<string, string> = {
    'AWS::Partition': 'aws',
    'AWS::Region': 'eu-west-1',
    'AWS::AccountId': '123456789012',
    'param:clusterName': 'prod-eks',
    ClusterName: 'prod-eks',
    'param:nodeRoleName': 'NodeRole',
    NodeRoleName: 'NodeRole',
    TableArn: 'TABLE_ARN',
  };
  const sub = (text: string) => text.replace(/\$\{([^}]+)\}/g, (all, name: string) => samples[name] ?? all);
  if (typeof value === 'string') return sub(value);
  if (Array.isArray(value)) return value.map(render);
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if ('Fn::Sub' in record) return sub(record['Fn::Sub'] as string);
    if ('Fn::GetAtt' in record && record['Fn::GetAtt'] === 'StateTable.Arn') return 'TABLE_ARN';
    return Object.fromEntries(Object.entries(record).map(([k, v]) => [sub(k), render(v)]));
  }
  return value;
}

const arrayify = (v: unknown) => (Array.isArray(v) ? v : [v]);
const serverless = yamlOf('serverless.yml');
const statements = serverless['provider']['iam']['role']['statements'] as Record<string, unknown>[];

describe('the state table', () => {
  it('is the same in serverless.yml, infra/table.yml and the code', () => {
    const expected = stateTableCloudFormation() as { Type: string; Properties: Record<string, unknown> };
    const inServerless = serverless['resources']['Resources']['StateTable'];
    const standalone = yamlOf('infra/table.yml')['Resources']['StateTable'];
    for (const table of [inServerless, standalone]) {
      expect(table.Type).toBe(expected.Type);
      const { TableName: _name, ...properties } = table.Properties;
      expect(properties).toEqual(expected.Properties);
      expect(table.DeletionPolicy).toBe('Retain');
    }
    // The functions get the table's name literally (invoke local cannot resolve a Ref).
    expect(serverless['provider']['environment']['TABLE_NAME']).toBe('${self:custom.tableName}');
    expect(inServerless.Properties.TableName).toBe('${self:custom.tableName}');
  });
});

describe('the IAM policy', () => {
  const consolidatorPolicy = serverless['resources']['Resources']['ConsolidatorPolicy'];

  it('is one document, the same string in serverless.yml and infra/iam.yml', () => {
    const role = yamlOf('infra/iam.yml')['Resources']['FunctionRole'];
    const [inServerless, variables] = consolidatorPolicy.Properties.PolicyDocument['Fn::Sub'] as [string, Record<string, unknown>];
    expect(role.Properties.Policies[0].PolicyDocument['Fn::Sub']).toBe(inServerless);
    // The variables the string uses are exactly the standalone template's parameters.
    expect(Object.keys(variables).sort()).toEqual(['ClusterName', 'NodeRoleName', 'TableArn']);
    expect(Object.keys(yamlOf('infra/iam.yml')['Parameters'])).toEqual(expect.arrayContaining(['ClusterName', 'NodeRoleName', 'TableArn']));
    // The function role gets it as a managed policy and has no statements of its own beside it.
    expect(serverless['provider']['iam']['role']).toEqual({ managedPolicies: [{ Ref: 'ConsolidatorPolicy' }] });
  });
});

// The packaged artifact itself: `sls package` with a real cluster name, then the compiled CloudFormation
// is read back, its substitutions done as CloudFormation would, and the resulting policy evaluated
// against the requests the launcher really makes. (Issue: condition keys once kept `${param:clusterName}`
// literally, so every launch and termination would have been denied.)
describe('the packaged CloudFormation template', () => {
  const where = { partition: 'aws', region: 'eu-west-1', accountId: '123456789012' };
  const tableArn = `arn:aws:dynamodb:eu-west-1:123456789012:table/eks-consolidator-prod-state`;
  let template: Record<string, any>;
  let policy: PolicyDocument;
  let packageDir: string;

  beforeAll(async () => {
    packageDir = mkdtempSync(join(tmpdir(), 'eks-consolidator-package-'));
    await execFileAsync(
      process.execPath,
      [
        join(root, 'node_modules/osls/bin/serverless.js'),
        'package',
        '--package', packageDir,
        '--stage', 'prod',
        '--region', where.region,
        '--param=clusterName=prod-eks',
        '--param=nodeRoleName=KarpenterNodeRole-prod-eks',
      ],
      { cwd: root, timeout: 170_000, env: { ...process.env, SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off', SLS_DEPRECATION_DISABLE: '*' } },
    );
    template = JSON.parse(readFileSync(join(packageDir, 'cloudformation-template-update-stack.json'), 'utf8')) as Record<string, any>;
    const [text, variables] = template['Resources']['ConsolidatorPolicy']['Properties']['PolicyDocument']['Fn::Sub'] as [string, Record<string, unknown>];
    const values: Record<string, string> = {
      'AWS::Partition': where.partition,
      'AWS::Region': where.region,
      'AWS::AccountId': where.accountId,
    };
    for (const [name, value] of Object.entries(variables)) {
      if (typeof value === 'string') values[name] = value;
      else if (JSON.stringify(value) === JSON.stringify({ 'Fn::GetAtt': ['StateTable', 'Arn'] })) values[name] = tableArn;
      else throw new Error(`unexpected Fn::Sub variable ${name}: ${JSON.stringify(value)}`);
    }
    // CloudFormation's Fn::Sub: ${Name} from the map or a pseudo parameter; anything else is an error.
    const substituted = text.replace(/\$\{([^}]+)\}/g, (all, name: string) => {
      if (values[name] === undefined) throw new Error(`Fn::Sub cannot resolve ${all}`);
      return values[name]!;
    });
    policy = JSON.parse(substituted) as PolicyDocument;
  }, 180_000);

  afterAll(() => {
    if (packageDir !== undefined) rmSync(packageDir, { recursive: true, force: true });
  });

  it('has no Serverless variable left anywhere, and the cluster name in the condition keys', () => {
    const whole = JSON.stringify(template);
    expect(whole).not.toMatch(/\$\{(param|self|opt|sls|env|file):/);
    const keys = policy.Statement.flatMap((s) => Object.values(s.Condition ?? {}).flatMap((c) => Object.keys(c)));
    expect(keys).toContain('aws:RequestTag/kubernetes.io/cluster/prod-eks');
    expect(keys).toContain('aws:ResourceTag/kubernetes.io/cluster/prod-eks');
    expect(keys.filter((k) => k.includes('${'))).toEqual([]);
    const role = template['Resources']['IamRoleLambdaExecution']['Properties'];
    expect(role.ManagedPolicyArns).toContainEqual({ Ref: 'ConsolidatorPolicy' });
    // The framework's own inline statements are about the functions' logs only.
    const inline = (role.Policies ?? []).flatMap((p: { PolicyDocument: { Statement: { Action: string[] }[] } }) => p.PolicyDocument.Statement.flatMap((s) => s.Action));
    expect(inline.every((a: string) => a.startsWith('logs:'))).toBe(true);
  });

  const goodTemplate: LaunchTemplateFacts = {
    id: 'lt-0abc123',
    tags: { 'kubernetes.io/cluster/prod-eks': 'owned' },
    tagSpecifications: {
      'network-interface': { 'kubernetes.io/cluster/prod-eks': 'owned' },
      'spot-instances-request': { 'kubernetes.io/cluster/prod-eks': 'owned' },
    },
    imageId: 'ami-0123',
    securityGroupIds: ['sg-0123'],
    instanceProfileRole: 'KarpenterNodeRole-prod-eks',
  };

  async function launcherRequest(capacityType: 'on-demand' | 'spot', clusterName = 'prod-eks') {
    const ec2 = new FakeEc2({ clusterName });
    try {
      const launcher = new Ec2InstanceLauncher({ client: ec2.client, clusterName });
      await launcher.launch({ commandId: 'cmd-1', nodePool: POOL, replacement: { ...replaceDecision(['n']).replacements[0]!, capacityType } });
      return ec2.fleetRequests[0]!;
    } finally {
      ec2.restore();
    }
  }

  it.each(['on-demand', 'spot'] as const)('allows every authorization of the launcher’s real %s CreateFleet', async (capacityType) => {
    const input = await launcherRequest(capacityType);
    const requests = createFleetAuthorizations(input, goodTemplate, where);
    expect(requests.length).toBeGreaterThan(15);
    const denied = requests.filter((r) => !evaluate(policy, r).allowed).map((r) => `${r.action} ${r.resource}`);
    expect(denied).toEqual([]);
  });

  it.each([
    ['the launch is tagged for another cluster', async () => createFleetAuthorizations(await launcherRequest('on-demand', 'other-eks'), goodTemplate, where), /:(instance|volume|fleet)\//],
    ['the launch template is not this cluster’s', async () => createFleetAuthorizations(await launcherRequest('on-demand'), { ...goodTemplate, tags: {} }, where), /launch-template\//],
    [
      'the launch template does not tag network interfaces',
      async () => createFleetAuthorizations(await launcherRequest('on-demand'), { ...goodTemplate, tagSpecifications: {} }, where),
      /network-interface\//,
    ],
    [
      'the instance profile holds another role',
      async () => createFleetAuthorizations(await launcherRequest('on-demand'), { ...goodTemplate, instanceProfileRole: 'Admin' }, where),
      /role\/Admin/,
    ],
  ])('denies a launch when %s', async (_name, requests, deniedResource) => {
    const denied = (await requests()).filter((r) => !evaluate(policy, r).allowed);
    expect(denied.length).toBeGreaterThan(0);
    expect(denied.every((r) => deniedResource.test(r.resource))).toBe(true);
  });

  const instance = (id: string) => `arn:aws:ec2:eu-west-1:123456789012:instance/${id}`;
  it.each([
    ['our replacement of this cluster', { 'eks-consolidator/managed': 'true', 'kubernetes.io/cluster/prod-eks': 'owned' }, true],
    ['a Karpenter node of this cluster', { 'karpenter.sh/nodepool': 'default', 'kubernetes.io/cluster/prod-eks': 'owned' }, true],
    ['a managed node group instance of this cluster (no nodepool tag)', { 'kubernetes.io/cluster/prod-eks': 'owned', 'eks:nodegroup-name': 'ng' }, false],
    ['a Karpenter node of another cluster', { 'karpenter.sh/nodepool': 'default', 'kubernetes.io/cluster/other': 'owned' }, false],
    ['our replacement of another cluster', { 'eks-consolidator/managed': 'true', 'kubernetes.io/cluster/other': 'owned' }, false],
    ['an untagged instance', {}, false],
  ])('terminating %s: allowed=%s', (_name, resourceTags, allowed) => {
    expect(evaluate(policy, { action: 'ec2:TerminateInstances', resource: instance('i-0abc'), resourceTags }).allowed).toBe(allowed);
  });

  it('grants no write outside the table, tagged launches and tagged terminations', () => {
    const table = (action: string) => evaluate(policy, { action, resource: tableArn }).allowed;
    expect(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:Query'].every(table)).toBe(true);
    expect(['dynamodb:Scan', 'dynamodb:DeleteTable', 'dynamodb:CreateTable'].some(table)).toBe(false);
    expect(evaluate(policy, { action: 'dynamodb:PutItem', resource: tableArn.replace('prod-state', 'other') }).allowed).toBe(false);
    // Tags only while launching: not on an existing instance, not on another cluster's launch.
    expect(evaluate(policy, { action: 'ec2:CreateTags', resource: instance('i-0old'), requestTags: { 'kubernetes.io/cluster/prod-eks': 'owned' } }).allowed).toBe(false);
    expect(
      evaluate(policy, { action: 'ec2:CreateTags', resource: instance('i-0new'), requestTags: { 'kubernetes.io/cluster/prod-eks': 'owned' }, context: { 'ec2:CreateAction': 'RunInstances' } })
        .allowed,
    ).toBe(true);
    for (const action of ['ec2:DeleteVolume', 'ec2:ModifyInstanceAttribute', 'ec2:StopInstances', 'iam:CreateRole', 'ec2:CreateLaunchTemplate']) {
      expect(evaluate(policy, { action, resource: '*' }).allowed, action).toBe(false);
      expect(evaluate(policy, { action, resource: instance('i-0abc') }).allowed, action).toBe(false);
    }
    // Reads anywhere are the catalog's and the launcher's.
    for (const action of ['ec2:DescribeInstanceTypes', 'ec2:DescribeLaunchTemplateVersions', 'ec2:DescribeSpotPriceHistory', 'pricing:GetProducts']) {
      expect(evaluate(policy, { action, resource: '*' }).allowed, action).toBe(true);
    }
    expect(evaluate(policy, { action: 'eks:DescribeCluster', resource: 'arn:aws:eks:eu-west-1:123456789012:cluster/prod-eks' }).allowed).toBe(true);
    expect(evaluate(policy, { action: 'eks:DescribeCluster', resource: 'arn:aws:eks:eu-west-1:123456789012:cluster/other' }).allowed).toBe(false);
  });
});

describe('the functions', () => {
  it('are scheduled with the timeouts, bundling and environment the handlers expect', () => {
    const { consolidate, emptiness } = serverless['functions'];
    // One module for both: the package holds a single bundle.
    expect(consolidate).toMatchObject({ handler: 'src/handlers/index.consolidate', timeout: 300, maximumRetryAttempts: 0 });
    expect(emptiness).toMatchObject({ handler: 'src/handlers/index.emptiness', timeout: 120, maximumRetryAttempts: 0 });
    expect(serverless['package']['individually']).toBe(false);
    expect(consolidate.events[0].schedule.rate).toBe('${param:consolidateRate}');
    expect(serverless['params']['default']).toMatchObject({ dryRun: 'true', consolidateRate: 'rate(5 minutes)', emptinessRate: 'rate(1 minute)' });
    expect(serverless['provider']).toMatchObject({ runtime: 'nodejs22.x', memorySize: 1024 });
    expect(serverless['custom']['esbuild']).toMatchObject({ format: 'cjs', outputFileExtension: '.cjs', exclude: [] });
    expect(Object.keys(serverless['provider']['environment'])).toEqual(
      expect.arrayContaining(['CLUSTER_NAME', 'TABLE_NAME', 'NODEPOOLS_SOURCE', 'FEATURE_GATES', 'DRY_RUN', 'KARPENTER']),
    );
    expect(serverless['package']['patterns']).toContain('src/adapters/catalog/bundled/catalog.json');
  });

  it.each(['consolidate', 'emptiness'])('%s points at a function the shared module exports', async (name) => {
    const [file, exported] = (serverless['functions'][name].handler as string).split('.') as [string, string];
    expect(file).toBe('src/handlers/index');
    expect(exported).toBe(name);
    const module = (await import('../../src/handlers/index.ts')) as Record<string, unknown>;
    expect(typeof module[exported]).toBe('function');
  });

  it.each(['consolidate', 'emptiness'])('%s declares its timeout, and its lease outlives it (config loads)', (name) => {
    const fn = serverless['functions'][name];
    expect(fn.environment.FUNCTION_TIMEOUT_SECONDS).toBe(String(fn.timeout));
    const env = { ...serverless['provider']['environment'], ...fn.environment, CLUSTER_NAME: 'prod-eks', AWS_REGION: 'us-east-1', TABLE_NAME: 'eks-consolidator-prod-state', NODEPOOLS_SOURCE: 'kubernetes', FEATURE_GATES: '', DRY_RUN: 'false', LOG_LEVEL: 'info' };
    const config = loadConfig(env, '/var/task');
    expect(config.functionTimeoutMs).toBe(fn.timeout * 1000);
    expect(config.leaseTtlMs).toBeGreaterThan(fn.timeout * 1000);
  });
});

describe('RBAC', () => {
  const [role, binding] = parseAllDocuments(read('infra/rbac.yaml')).map((d) => d.toJSON()) as [
    { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] },
    { subjects: { kind: string; name: string }[]; roleRef: { name: string } },
  ];
  const can = (verb: string, resource: string) => role.rules.some((r) => r.resources.includes(resource) && r.verbs.includes(verb));

  it('lets a pass read everything it models and the NodePools', () => {
    for (const resource of [...LISTED_RESOURCES, 'nodepools']) {
      expect(can('list', resource), resource).toBe(true);
    }
  });

  it('allows the writes of a disruption, through the Eviction API only', () => {
    expect(can('patch', 'nodes')).toBe(true);
    expect(can('delete', 'nodes')).toBe(true);
    expect(can('create', 'pods/eviction')).toBe(true);
    expect(can('create', 'events')).toBe(true);
    expect(can('delete', 'pods')).toBe(false);
    expect(role.rules.some((r) => r.verbs.includes('*') || r.resources.includes('*') || r.resources.includes('secrets'))).toBe(false);
    expect(binding.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'eks-consolidator' }]);
    expect(serverless['resources']['Resources']['ClusterAccessEntry']['Properties']['KubernetesGroups']).toEqual(['eks-consolidator']);
  });
});

describe('the example NodePools', () => {
  it('parse, with the launch annotations the actuator reads', async () => {
    const { readNodePoolsFile } = await import('../../src/adapters/files/index.ts');
    const pools = await readNodePoolsFile(join(root, 'infra/nodepools.example.yaml'));
    expect(pools.map((p) => [p.name, p.consolidationPolicy])).toEqual([
      ['general', 'WhenEmptyOrUnderutilized'],
      ['batch', 'WhenEmpty'],
    ]);
    expect(pools[0]!.launch).toMatchObject({
      'eks-consolidator/launch-template': 'lt-0123456789abcdef0',
      'eks-consolidator/launch-template-version': '$Default',
      'eks-consolidator/subnets': expect.stringContaining('subnet-'),
    });
  });
});
