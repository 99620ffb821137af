// The deployment descriptions agree with each other and with the code: serverless.yml, infra/table.yml
// and stateTableCloudFormation() describe one table; serverless.yml and infra/iam.yml the same two
// policies, the EC2 writes left out of both for a Karpenter-only deployment; infra/rbac.yaml is bound
// to the group the access entry maps the function role to (what the role allows, request by request:
// test/infra/rbac.test.ts).
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
import { authorize } from '../support/rbac.ts';

const execFileAsync = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

// CloudFormation's short-form intrinsics, as plain objects.
const cfnTags: Tags = ['Ref', 'Sub', 'GetAtt', 'Equals'].map((name) => ({
  tag: `!${name}`,
  identify: () => false,
  resolve: (value: unknown) => ({ [name === 'Ref' ? 'Ref' : `Fn::${name}`]: value }),
}));
const cfnSeqTags: Tags = ['Sub', 'Equals', 'Not', 'If'].map((name) => ({
  tag: `!${name}`,
  collection: 'seq' as const,
  identify: () => false,
  resolve: (value: unknown) => ({ [`Fn::${name}`]: (value as { toJSON(): unknown }).toJSON() }),
}));
const yamlOf = (path: string) => parse(read(path), { customTags: [...cfnTags, ...cfnSeqTags] }) as Record<string, any>;

const serverless = yamlOf('serverless.yml');
const standaloneIam = yamlOf('infra/iam.yml');

// ---------------------------------------------------------------------------------------------------
// CloudFormation as deployed: enough of it to know which IAM statements a stack would really hold.

type Cfn = Record<string, any>;
const NO_VALUE = Symbol('AWS::NoValue');

/** A parameter's value: the one given, else the template's Default; none is an error (as in a deploy). */
function parameterValue(template: Cfn, parameters: Readonly<Record<string, string>>, name: string): string {
  const value = parameters[name] ?? template['Parameters']?.[name]?.['Default'];
  if (typeof value !== 'string') throw new Error(`parameter ${name} has no value`);
  return value;
}

/** The condition functions (Fn::Equals, Not, And, Or, Condition) on literals and parameter Refs. */
function conditionHolds(template: Cfn, parameters: Readonly<Record<string, string>>, expression: unknown): boolean {
  const scalar = (v: unknown): string => {
    if (typeof v === 'string') return v;
    if (v !== null && typeof v === 'object' && typeof (v as Cfn)['Ref'] === 'string') return parameterValue(template, parameters, (v as Cfn)['Ref']);
    throw new Error(`cannot evaluate ${JSON.stringify(v)} in a condition`);
  };
  const e = expression as Cfn;
  if ('Fn::Equals' in e) return scalar(e['Fn::Equals'][0]) === scalar(e['Fn::Equals'][1]);
  if ('Fn::Not' in e) return !conditionHolds(template, parameters, e['Fn::Not'][0]);
  if ('Fn::And' in e) return (e['Fn::And'] as unknown[]).every((c) => conditionHolds(template, parameters, c));
  if ('Fn::Or' in e) return (e['Fn::Or'] as unknown[]).some((c) => conditionHolds(template, parameters, c));
  if ('Condition' in e) {
    const definition = template['Conditions']?.[e['Condition']];
    if (definition === undefined) throw new Error(`no condition ${e['Condition']}`);
    return conditionHolds(template, parameters, definition);
  }
  throw new Error(`cannot evaluate condition ${JSON.stringify(e)}`);
}

/**
 * The resources a stack made from `template` with `parameters` would hold: those whose Condition is
 * false are not created, each Fn::If is replaced by its chosen branch and AWS::NoValue removes what
 * holds it. Other intrinsics are left as written.
 */
function deployedResources(template: Cfn, parameters: Readonly<Record<string, string>> = {}): Record<string, Cfn> {
  const holds = (name: string) => conditionHolds(template, parameters, { Condition: name });
  const resolve = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(resolve).filter((v) => v !== NO_VALUE);
    if (value !== null && typeof value === 'object') {
      const record = value as Cfn;
      if ('Fn::If' in record) {
        const [condition, whenTrue, whenFalse] = record['Fn::If'] as [string, unknown, unknown];
        return resolve(holds(condition) ? whenTrue : whenFalse);
      }
      if (record['Ref'] === 'AWS::NoValue') return NO_VALUE;
      return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, resolve(v)]).filter(([, v]) => v !== NO_VALUE));
    }
    return value;
  };
  return Object.fromEntries(
    Object.entries(template['Resources'] as Record<string, Cfn>)
      .filter(([, r]) => r['Condition'] === undefined || holds(r['Condition']))
      .map(([id, r]) => [id, resolve(r) as Cfn]),
  );
}

/** Whether every Rule of the template passes with `parameters` (as CloudFormation checks them first). */
function rulesPass(template: Cfn, parameters: Readonly<Record<string, string>>): boolean {
  return Object.values((template['Rules'] ?? {}) as Record<string, Cfn>).every(
    (rule) =>
      (rule['RuleCondition'] !== undefined && !conditionHolds(template, parameters, rule['RuleCondition'])) ||
      (rule['Assertions'] as { Assert: unknown }[]).every((a) => conditionHolds(template, parameters, a.Assert)),
  );
}

const where = { partition: 'aws', region: 'eu-west-1', accountId: '123456789012' };
const tableArn = `arn:aws:dynamodb:eu-west-1:123456789012:table/eks-consolidator-prod-state`;
const instance = (id: string) => `arn:aws:ec2:eu-west-1:123456789012:instance/${id}`;

/** CloudFormation's Fn::Sub on a policy string: ${Name} from the map, a parameter or a pseudo parameter. */
function substitutedPolicy(sub: string | [string, Record<string, unknown>], parameters: Readonly<Record<string, string>>): PolicyDocument {
  const [text, variables] = typeof sub === 'string' ? [sub, {}] : sub;
  const values: Record<string, string> = { 'AWS::Partition': where.partition, 'AWS::Region': where.region, 'AWS::AccountId': where.accountId, ...parameters };
  for (const [name, value] of Object.entries(variables)) {
    if (typeof value === 'string') values[name] = value;
    else if (JSON.stringify(value) === JSON.stringify({ 'Fn::GetAtt': ['StateTable', 'Arn'] })) values[name] = tableArn;
    else throw new Error(`unexpected Fn::Sub variable ${name}: ${JSON.stringify(value)}`);
  }
  // Anything else is an error, as in CloudFormation.
  const substituted = text.replace(/\$\{([^}]+)\}/g, (all, name: string) => {
    if (values[name] === undefined) throw new Error(`Fn::Sub cannot resolve ${all}`);
    return values[name]!;
  });
  return JSON.parse(substituted) as PolicyDocument;
}

interface RolePolicies {
  /** Our policies (managed or inline, written as Fn::Sub strings), substituted, by name. */
  readonly ours: Readonly<Record<string, PolicyDocument>>;
  /** Our statements together: what `evaluate` judges requests against. */
  readonly policy: PolicyDocument;
  /** Every statement that takes effect on the role, the framework's own (logs) included. */
  readonly statements: readonly { readonly Effect: string; readonly Action?: unknown; readonly NotAction?: unknown; readonly Sid?: string }[];
}

/**
 * The policies a deployed stack attaches to `roleId`: managed policies it lists or that name it in
 * their Roles, and its inline policies.
 */
function rolePolicies(resources: Record<string, Cfn>, roleId: string, parameters: Readonly<Record<string, string>> = {}): RolePolicies {
  const role = resources[roleId]!['Properties'] as Cfn;
  const documents: [string, unknown][] = [];
  for (const [id, resource] of Object.entries(resources)) {
    if (resource['Type'] !== 'AWS::IAM::ManagedPolicy') continue;
    const attached =
      ((resource['Properties']['Roles'] ?? []) as unknown[]).some((r) => JSON.stringify(r) === JSON.stringify({ Ref: roleId })) ||
      ((role['ManagedPolicyArns'] ?? []) as unknown[]).some((arn) => JSON.stringify(arn) === JSON.stringify({ Ref: id }));
    if (attached) documents.push([id, resource['Properties']['PolicyDocument']]);
  }
  for (const inline of (role['Policies'] ?? []) as { PolicyName: unknown; PolicyDocument: unknown }[]) {
    documents.push([typeof inline.PolicyName === 'string' ? inline.PolicyName : JSON.stringify(inline.PolicyName), inline.PolicyDocument]);
  }
  const ours: Record<string, PolicyDocument> = {};
  const statements: RolePolicies['statements'][number][] = [];
  for (const [name, document] of documents) {
    const sub = (document as Cfn)['Fn::Sub'] as string | [string, Record<string, unknown>] | undefined;
    if (sub !== undefined) ours[name] = substitutedPolicy(sub, parameters);
    statements.push(...((sub === undefined ? (document as Cfn)['Statement'] : ours[name]!.Statement) as RolePolicies['statements']));
  }
  return { ours, policy: { Version: '2012-10-17', Statement: Object.values(ours).flatMap((d) => d.Statement) }, statements };
}

/** What the `karpenter` actuator must not be able to do: every write of the `ec2` actuator. */
const EC2_ACTUATOR_ACTIONS = ['ec2:CreateFleet', 'ec2:RunInstances', 'ec2:TerminateInstances', 'ec2:CreateTags', 'iam:PassRole'];

/**
 * Which of those actions an Allow statement that takes effect names, whatever its resource or
 * condition (a wildcard such as `ec2:*` counts), as `Sid: action`; a NotAction statement grants what
 * it does not list.
 */
function ec2ActuatorGrants(statements: RolePolicies['statements']): string[] {
  const matches = (pattern: string, action: string) => {
    const escaped = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
    return new RegExp(`^${escaped}$`, 'i').test(action);
  };
  return statements
    .filter((s) => s.Effect === 'Allow')
    .flatMap((s) => {
      const listed = (patterns: unknown, action: string) => ([] as string[]).concat(patterns as string | string[]).some((p) => matches(p, action));
      const grants = (action: string) => (s.NotAction !== undefined ? !listed(s.NotAction, action) : listed(s.Action, action));
      return EC2_ACTUATOR_ACTIONS.filter(grants).map((action) => `${s.Sid ?? '(no Sid)'}: ${action}`);
    });
}

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

describe('the IAM policies', () => {
  const resources = serverless['resources'];
  const role = standaloneIam['Resources']['FunctionRole'];
  const [readsInline, ec2Inline] = role.Properties.Policies as [Cfn, Cfn];

  it('are the same two documents in serverless.yml and infra/iam.yml', () => {
    const [reads, readVariables] = resources['Resources']['ConsolidatorPolicy'].Properties.PolicyDocument['Fn::Sub'] as [string, Record<string, unknown>];
    const [ec2, ec2Variables] = resources['Resources']['Ec2ActuatorPolicy'].Properties.PolicyDocument['Fn::Sub'] as [string, Record<string, unknown>];
    expect(readsInline.PolicyDocument['Fn::Sub']).toBe(reads);
    expect(ec2Inline['Fn::If'][1].PolicyDocument['Fn::Sub']).toBe(ec2);
    // The variables the strings use are exactly parameters of the standalone template.
    expect(Object.keys(readVariables).sort()).toEqual(['ClusterName', 'TableArn']);
    expect(Object.keys(ec2Variables).sort()).toEqual(['ClusterName', 'NodeRoleName']);
    expect(Object.keys(standaloneIam['Parameters'])).toEqual(expect.arrayContaining(['ClusterName', 'NodeRoleName', 'TableArn', 'Actuator']));
    // The function role gets the reads as a managed policy and has no statements of its own beside it;
    // the EC2 policy attaches itself (Roles), under the condition.
    expect(serverless['provider']['iam']['role']).toEqual({ managedPolicies: [{ Ref: 'ConsolidatorPolicy' }] });
    expect(resources['Resources']['Ec2ActuatorPolicy']).toMatchObject({ Condition: 'ActsThroughEc2', Properties: { Roles: [{ Ref: 'IamRoleLambdaExecution' }] } });
    expect(ec2Inline['Fn::If'][0]).toBe('ActsThroughEc2');
    expect(ec2Inline['Fn::If'][2]).toEqual({ Ref: 'AWS::NoValue' });
  });

  it('leave the EC2 writes out for `karpenter` only, on the same values in both files', () => {
    // serverless.yml's `actuator` param must be one of the three (custom.actuators, checked when packaging).
    expect(serverless['params']['default']['actuator']).toBe('auto');
    expect(serverless['custom']['actuator']).toBe('${self:custom.actuators.${param:actuator}}');
    expect(Object.keys(serverless['custom']['actuators'])).toEqual(['auto', 'karpenter', 'ec2']);
    expect(standaloneIam['Parameters']['Actuator']).toMatchObject({ Default: 'auto', AllowedValues: ['auto', 'karpenter', 'ec2'] });
    for (const actuator of ['auto', 'karpenter', 'ec2']) {
      // serverless.yml's condition on the value the variable resolves to.
      const asPackaged = JSON.parse(JSON.stringify(resources['Conditions']).replaceAll('${self:custom.actuator}', actuator)) as Cfn;
      const inServerless = conditionHolds({ Conditions: asPackaged }, {}, { Condition: 'ActsThroughEc2' });
      const standalone = conditionHolds(standaloneIam, { Actuator: actuator }, { Condition: 'ActsThroughEc2' });
      expect([actuator, inServerless, standalone]).toEqual([actuator, actuator !== 'karpenter', actuator !== 'karpenter']);
    }
  });

  const parameters = (actuator: string, nodeRoleName = 'KarpenterNodeRole-prod-eks') => ({ ClusterName: 'prod-eks', TableArn: tableArn, NodeRoleName: nodeRoleName, Actuator: actuator });

  it.each(['auto', 'ec2', 'karpenter'])('infra/iam.yml deployed with Actuator=%s: EC2 writes only when it acts through EC2', (actuator) => {
    const { statements, ours } = rolePolicies(deployedResources(standaloneIam, parameters(actuator)), 'FunctionRole', parameters(actuator));
    const grants = ec2ActuatorGrants(statements);
    if (actuator === 'karpenter') {
      expect(grants).toEqual([]);
      expect(Object.keys(ours)).toEqual(['eks-consolidator']);
    } else {
      expect(new Set(grants.map((g) => g.split(': ')[1]))).toEqual(new Set(EC2_ACTUATOR_ACTIONS));
      expect(Object.keys(ours)).toEqual(['eks-consolidator', 'eks-consolidator-ec2-actuator']);
    }
  });

  it('infra/iam.yml needs NodeRoleName unless the actuator is karpenter', () => {
    expect(rulesPass(standaloneIam, parameters('auto'))).toBe(true);
    expect(rulesPass(standaloneIam, parameters('auto', ''))).toBe(false);
    expect(rulesPass(standaloneIam, parameters('ec2', ''))).toBe(false);
    expect(rulesPass(standaloneIam, parameters('karpenter', ''))).toBe(true);
  });
});

/** `sls package` into a fresh directory; the compiled CloudFormation (update stack) it wrote. */
async function slsPackage(extraParams: readonly string[]): Promise<Cfn> {
  const packageDir = mkdtempSync(join(tmpdir(), 'eks-consolidator-package-'));
  try {
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
        ...extraParams,
      ],
      { cwd: root, timeout: 170_000, env: { ...process.env, SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off', SLS_DEPRECATION_DISABLE: '*' } },
    );
    return JSON.parse(readFileSync(join(packageDir, 'cloudformation-template-update-stack.json'), 'utf8')) as Cfn;
  } finally {
    rmSync(packageDir, { recursive: true, force: true });
  }
}

// The packaged artifact itself: `sls package` with a real cluster name, once with the default actuator
// and once with `--param=actuator=karpenter`; the compiled CloudFormation is read back, its conditions
// evaluated and its substitutions done as CloudFormation would, and the resulting policies evaluated
// against the requests the launcher really makes. (Issue: condition keys once kept
// `${param:clusterName}` literally, so every launch and termination would have been denied.)
describe('the packaged CloudFormation template', () => {
  let template: Cfn;
  let policy: PolicyDocument;
  let karpenterTemplate: Cfn;
  let karpenter: RolePolicies;

  beforeAll(async () => {
    // One after the other: serverless-esbuild builds in the service's .esbuild directory.
    template = await slsPackage([]);
    karpenterTemplate = await slsPackage(['--param=actuator=karpenter']);
    policy = rolePolicies(deployedResources(template), 'IamRoleLambdaExecution').policy;
    karpenter = rolePolicies(deployedResources(karpenterTemplate), 'IamRoleLambdaExecution');
  }, 360_000);

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

  it('tells the functions their actuator', () => {
    for (const [compiled, actuator] of [[template, 'auto'], [karpenterTemplate, 'karpenter']] as const) {
      for (const fn of ['ConsolidateLambdaFunction', 'EmptinessLambdaFunction']) {
        expect(compiled['Resources'][fn]['Properties']['Environment']['Variables']['ACTUATOR'], fn).toBe(actuator);
      }
    }
  });

  it('with the default actuator, grants the EC2 writes; with `karpenter`, none in any statement that takes effect', () => {
    const all = rolePolicies(deployedResources(template), 'IamRoleLambdaExecution');
    expect(Object.keys(all.ours).sort()).toEqual(['ConsolidatorPolicy', 'Ec2ActuatorPolicy']);
    expect(new Set(ec2ActuatorGrants(all.statements).map((g) => g.split(': ')[1]))).toEqual(new Set(EC2_ACTUATOR_ACTIONS));

    // The condition is what removes them: the compiled template says `karpenter` = `karpenter`.
    expect(karpenterTemplate['Conditions']['ActsThroughEc2']).toEqual({ 'Fn::Not': [{ 'Fn::Equals': ['karpenter', 'karpenter'] }] });
    expect(Object.keys(karpenter.ours)).toEqual(['ConsolidatorPolicy']);
    expect(ec2ActuatorGrants(karpenter.statements)).toEqual([]);
    // Nothing else in the stack grants them either (no other policy, role or inline statement).
    const karpenterResources = deployedResources(karpenterTemplate);
    expect(Object.values(karpenterResources).filter((r) => /^AWS::IAM::(ManagedPolicy|Policy|Role)$/.test(r['Type'])).length).toBe(2);
    expect(JSON.stringify(karpenterResources)).not.toMatch(/ec2:(CreateFleet|RunInstances|TerminateInstances|CreateTags)|iam:PassRole/);
  });

  it('with `karpenter`, keeps the reads and denies every authorization of a launch and a termination', async () => {
    const readsOf = (p: PolicyDocument) =>
      [
        ...['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:Query', 'dynamodb:ConditionCheckItem'].map((action) => ({ action, resource: tableArn })),
        { action: 'eks:DescribeCluster', resource: 'arn:aws:eks:eu-west-1:123456789012:cluster/prod-eks' },
        ...['ec2:DescribeInstanceTypes', 'ec2:DescribeInstanceTypeOfferings', 'ec2:DescribeSpotPriceHistory', 'ec2:DescribeLaunchTemplateVersions', 'pricing:GetProducts'].map((action) => ({ action, resource: '*' })),
      ].map((r) => [r.action, evaluate(p, r).allowed]);
    expect(readsOf(karpenter.policy)).toEqual(readsOf(policy));
    expect(readsOf(karpenter.policy).every(([, allowed]) => allowed)).toBe(true);

    const launch = createFleetAuthorizations(await launcherRequest('on-demand'), goodTemplate, where);
    expect(launch.filter((r) => evaluate(karpenter.policy, r).allowed).map((r) => `${r.action} ${r.resource}`)).toEqual([]);
    for (const resourceTags of [
      { 'eks-consolidator/managed': 'true', 'kubernetes.io/cluster/prod-eks': 'owned' } as Record<string, string>,
      { 'karpenter.sh/nodepool': 'default', 'kubernetes.io/cluster/prod-eks': 'owned' },
    ]) {
      expect(evaluate(karpenter.policy, { action: 'ec2:TerminateInstances', resource: instance('i-0abc'), resourceTags }).allowed).toBe(false);
    }
    expect(
      evaluate(karpenter.policy, { action: 'ec2:CreateTags', resource: instance('i-0new'), requestTags: { 'kubernetes.io/cluster/prod-eks': 'owned' }, context: { 'ec2:CreateAction': 'RunInstances' } })
        .allowed,
    ).toBe(false);
    expect(evaluate(karpenter.policy, { action: 'iam:PassRole', resource: 'arn:aws:iam::123456789012:role/KarpenterNodeRole-prod-eks', context: { 'iam:PassedToService': 'ec2.amazonaws.com' } }).allowed).toBe(false);
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
      expect.arrayContaining(['CLUSTER_NAME', 'TABLE_NAME', 'NODEPOOLS_SOURCE', 'FEATURE_GATES', 'DRY_RUN', 'KARPENTER', 'ACTUATOR']),
    );
    // The checked value of the `actuator` param (custom.actuator), the one the IAM condition tests.
    expect(serverless['provider']['environment']['ACTUATOR']).toBe('${self:custom.actuator}');
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
    const env = { ...serverless['provider']['environment'], ...fn.environment, CLUSTER_NAME: 'prod-eks', AWS_REGION: 'us-east-1', TABLE_NAME: 'eks-consolidator-prod-state', NODEPOOLS_SOURCE: 'kubernetes', FEATURE_GATES: '', DRY_RUN: 'false', LOG_LEVEL: 'info', ACTUATOR: serverless['params']['default']['actuator'] };
    const config = loadConfig(env, '/var/task');
    expect(config.functionTimeoutMs).toBe(fn.timeout * 1000);
    expect(config.leaseTtlMs).toBeGreaterThan(fn.timeout * 1000);
  });
});

describe('RBAC', () => {
  const [, binding] = parseAllDocuments(read('infra/rbac.yaml')).map((d) => d.toJSON()) as [
    unknown,
    { subjects: { apiGroup: string; kind: string; name: string }[]; roleRef: { kind: string; name: string } },
  ];

  it('lets a pass list everything it models and the NodePools', () => {
    const paths = { nodes: '/api/v1/nodes', pods: '/api/v1/pods', namespaces: '/api/v1/namespaces', persistentvolumes: '/api/v1/persistentvolumes',
      persistentvolumeclaims: '/api/v1/persistentvolumeclaims', poddisruptionbudgets: '/apis/policy/v1/poddisruptionbudgets', daemonsets: '/apis/apps/v1/daemonsets',
      deployments: '/apis/apps/v1/deployments', statefulsets: '/apis/apps/v1/statefulsets', replicasets: '/apis/apps/v1/replicasets' } as Record<string, string>;
    for (const resource of LISTED_RESOURCES) {
      expect(paths[resource], `${resource}: add its path here`).toBeDefined();
      expect(authorize({ method: 'GET', path: paths[resource]!, query: { limit: '500' } }), resource).toMatchObject({ allowed: true, verb: 'list' });
    }
    expect(authorize({ method: 'GET', path: '/apis/karpenter.sh/v1/nodepools' }).allowed).toBe(true);
  });

  it('is bound to the group the access entry maps the function role to', () => {
    expect(binding.roleRef).toMatchObject({ kind: 'ClusterRole', name: 'eks-consolidator' });
    expect(binding.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'eks-consolidator' }]);
    const accessEntry = serverless['resources']['Resources']['ClusterAccessEntry'];
    expect(accessEntry).toMatchObject({ Condition: 'CreateAccessEntry', Properties: { KubernetesGroups: ['eks-consolidator'], Type: 'STANDARD', PrincipalArn: { 'Fn::GetAtt': 'IamRoleLambdaExecution.Arn' } } });
    // infra/access-entry.md's three ways name the same group, and no access policy.
    const doc = read('infra/access-entry.md');
    expect(doc).toContain('--kubernetes-groups eks-consolidator');
    expect(doc).toContain('KubernetesGroups: [eks-consolidator]');
    expect(doc).toContain('groups: [eks-consolidator]');
    expect(doc).not.toMatch(/associate-access-policy/);
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
