// The deployment descriptions agree with each other and with the code: serverless.yml, infra/table.yml
// and stateTableCloudFormation() describe one table; serverless.yml and infra/iam.yml one policy;
// infra/rbac.yaml grants what the Kubernetes adapters call, and nothing that deletes pods.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments, type Tags } from 'yaml';
import { loadConfig } from '../../src/app/config.ts';
import { describe, expect, it } from 'vitest';
import { stateTableCloudFormation } from '../../src/adapters/dynamodb/tableSchema.ts';
import { LISTED_RESOURCES } from '../../src/adapters/kubernetes/liveClusterSource.ts';

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
  it('is the same in serverless.yml and infra/iam.yml', () => {
    const role = yamlOf('infra/iam.yml')['Resources']['FunctionRole'];
    const document = JSON.parse(render(role.Properties.Policies[0].PolicyDocument) as string) as { Statement: unknown[] };
    expect(document.Statement).toEqual(render(statements));
  });

  it('grants no write outside the table, tagged launches and tagged terminations', () => {
    const rendered = render(statements) as { Sid: string; Action: string | string[]; Resource: string | string[]; Condition?: Record<string, Record<string, unknown>> }[];
    const allows = (action: string) => rendered.filter((s) => arrayify(s.Action).includes(action));
    // Only Describe* and GetProducts on '*'.
    for (const s of rendered.filter((s) => arrayify(s.Resource).includes('*'))) {
      expect(arrayify(s.Action).every((a) => a === 'ec2:Describe*' || a === 'pricing:GetProducts')).toBe(true);
    }
    expect(allows('dynamodb:PutItem').map((s) => s.Resource)).toEqual([['TABLE_ARN']]);
    expect(rendered.some((s) => arrayify(s.Action).some((a) => /dynamodb:(Scan|\*|DeleteTable|CreateTable)/.test(a)))).toBe(false);
    // Every termination is conditioned on this cluster's tag.
    const terminate = allows('ec2:TerminateInstances');
    expect(terminate).toHaveLength(2);
    for (const s of terminate) {
      expect(s.Condition?.['StringEquals']?.['aws:ResourceTag/kubernetes.io/cluster/prod-eks']).toBe('owned');
    }
    expect(terminate.map((s) => s.Condition)).toEqual([
      { StringEquals: { 'aws:ResourceTag/eks-consolidator/managed': 'true', 'aws:ResourceTag/kubernetes.io/cluster/prod-eks': 'owned' } },
      { StringEquals: { 'aws:ResourceTag/kubernetes.io/cluster/prod-eks': 'owned' }, StringLike: { 'aws:ResourceTag/karpenter.sh/nodepool': '?*' } },
    ]);
    // An instance can only be launched tagged as ours and this cluster's.
    const instanceLaunch = allows('ec2:RunInstances').filter((s) => arrayify(s.Resource).some((r) => r.includes(':instance/')));
    expect(instanceLaunch).toHaveLength(1);
    expect(instanceLaunch[0]!.Condition).toEqual({
      StringEquals: { 'aws:RequestTag/eks-consolidator/managed': 'true', 'aws:RequestTag/kubernetes.io/cluster/prod-eks': 'owned' },
    });
    expect(allows('ec2:CreateTags')[0]!.Condition).toEqual({ StringEquals: { 'ec2:CreateAction': ['RunInstances', 'CreateFleet'] } });
    expect(allows('iam:PassRole')[0]!.Resource).toBe('arn:aws:iam::123456789012:role/NodeRole');
    expect(allows('eks:DescribeCluster')[0]!.Resource).toBe('arn:aws:eks:eu-west-1:123456789012:cluster/prod-eks');
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
