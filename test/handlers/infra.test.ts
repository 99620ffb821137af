// The deployment descriptions agree with each other and with the code: serverless.yml, infra/table.yml
// and stateTableCloudFormation() describe one table; serverless.yml and infra/iam.yml the same two
// policies, the EC2 writes left out of both for a Karpenter-only deployment, and what the packaged
// policies allow and deny, request by request, judged by an IAM simulator; infra/rbac.yaml is bound
// to the group the access entry maps the function role to (what the role allows, request by request:
// test/infra/rbac.test.ts).
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { CreateFleetCommandInput, TerminateInstancesCommandInput } from '@aws-sdk/client-ec2';
import { parse, parseAllDocuments, type Tags } from 'yaml';
import { loadConfig } from '../../src/app/config.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ec2InstanceLauncher } from '../../src/adapters/aws/ec2Launcher.ts';
import { FakeEc2, POOL, replaceDecision } from '../act/harness.ts';
import { authorization, createFleetAuthorizations, runInstancesAuthorizations, tagContext, type LaunchTemplateFacts, type Where } from '../support/ec2Authorizations.ts';
import { simulate, type AuthorizationRequest, type PolicyDocument } from '../support/iamSimulator.ts';
import { pricingEndpointRegion } from '../../src/adapters/aws/pricing.ts';
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

const where: Where = { partition: 'aws', region: 'eu-west-1', accountId: '123456789012' };
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
  /** Our policies (managed or inline, written as Fn::Sub strings), substituted, by name: what the simulator judges requests against. */
  readonly ours: Readonly<Record<string, PolicyDocument>>;
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
  return { ours, statements };
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

  it('stay within IAM’s size limits with the longest names', () => {
    // IAM counts characters without whitespace: 6,144 for a managed policy (serverless.yml), 10,240 for
    // all the inline policies of a role together (infra/iam.yml). EKS allows 100 characters in a
    // cluster name, IAM 64 in a role name, DynamoDB 255 in a table name.
    const longest: Record<string, string> = {
      'AWS::Partition': 'aws-us-gov',
      'AWS::Region': 'ap-southeast-5',
      'AWS::AccountId': '123456789012',
      ClusterName: 'c'.repeat(100),
      NodeRoleName: 'r'.repeat(64),
      TableArn: `arn:aws-us-gov:dynamodb:ap-southeast-5:123456789012:table/${'t'.repeat(255)}`,
    };
    const size = (id: string) => {
      const [text] = resources['Resources'][id].Properties.PolicyDocument['Fn::Sub'] as [string, unknown];
      return text.replace(/\$\{([^}]+)\}/g, (_all, name: string) => longest[name]!).replace(/\s/g, '').length;
    };
    expect(size('ConsolidatorPolicy')).toBeLessThanOrEqual(6144);
    expect(size('Ec2ActuatorPolicy')).toBeLessThanOrEqual(6144);
    expect(size('ConsolidatorPolicy') + size('Ec2ActuatorPolicy')).toBeLessThanOrEqual(10240);
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
// evaluated and its substitutions done as CloudFormation would, and the resulting policies judged by an
// IAM simulator (test/support/iamSimulator.ts) against the requests our code really makes and against
// requests it must never be able to make. (Condition keys once kept `${param:clusterName}` literally:
// every launch and termination would have been denied.)

const goodTemplate: LaunchTemplateFacts = {
  id: 'lt-0abc123',
  tags: { 'kubernetes.io/cluster/prod-eks': 'owned' },
  tagSpecifications: {
    'network-interface': { 'kubernetes.io/cluster/prod-eks': 'owned' },
    'spot-instances-request': { 'kubernetes.io/cluster/prod-eks': 'owned' },
  },
  imageId: 'ami-0123',
  snapshotIds: ['snap-0123'],
  securityGroupIds: ['sg-0123'],
  instanceProfileRole: 'KarpenterNodeRole-prod-eks',
};
const ourTags = { 'eks-consolidator/managed': 'true', 'kubernetes.io/cluster/prod-eks': 'owned', 'karpenter.sh/nodepool': 'general' };
const nodeRole = 'arn:aws:iam::123456789012:role/KarpenterNodeRole-prod-eks';

/** The EC2 Describe actions src/ sends (`new Describe…Command(` in a file that imports @aws-sdk/client-ec2), sorted. */
function ec2DescribesInSource(): string[] {
  const found = new Set<string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) {
        const text = readFileSync(path, 'utf8');
        if (!text.includes(`'@aws-sdk/client-ec2'`)) continue;
        for (const m of text.matchAll(/\bnew (Describe\w+)Command\(/g)) found.add(`ec2:${m[1]}`);
      }
    }
  };
  walk(join(root, 'src'));
  return [...found].sort();
}

/** The launcher's CreateFleet for one replacement (FakeEc2 answers its template checks as this cluster's). */
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

/**
 * Every authorization of every EC2 call the launcher makes to launch a replacement from `goodTemplate`
 * and then terminate it (its template checks, subnet and instance reads, the fleet, the termination).
 */
async function launcherAuthorizations(capacityType: 'on-demand' | 'spot'): Promise<AuthorizationRequest[]> {
  const ec2 = new FakeEc2({ clusterName: 'prod-eks' });
  try {
    const launcher = new Ec2InstanceLauncher({ client: ec2.client, clusterName: 'prod-eks' });
    const launched = await launcher.launch({ commandId: 'cmd-1', nodePool: POOL, replacement: { ...replaceDecision(['n']).replacements[0]!, capacityType } });
    expect(await launcher.terminate(launched.instanceId, { requireOurTag: true })).toBe('terminating');
    const requests: AuthorizationRequest[] = [];
    for (const call of ec2.mock.calls()) {
      const command = call.args[0] as unknown as { constructor: { name: string }; input: unknown };
      const action = `ec2:${command.constructor.name.replace(/Command$/, '')}`;
      if (action === 'ec2:CreateFleet') requests.push(...(await createFleetAuthorizations(command.input as CreateFleetCommandInput, goodTemplate, where)));
      else if (action === 'ec2:TerminateInstances') {
        for (const id of (command.input as TerminateInstancesCommandInput).InstanceIds ?? []) {
          requests.push(await authorization(action, instance(id), tagContext('aws:ResourceTag', ec2.instances.get(id)!.tags), where));
        }
      } else requests.push(await authorization(action, '*', {}, where));
    }
    return requests;
  } finally {
    ec2.restore();
  }
}

const terminate = (tags: Record<string, string>) => async () => [await authorization('ec2:TerminateInstances', instance('i-0abc'), tagContext('aws:ResourceTag', tags), where)];
const one = (action: string, resource: string, context: Record<string, string | readonly string[]> = {}, at: Where = where) => async () => [await authorization(action, resource, context, at)];
const all = (factories: readonly (() => Promise<AuthorizationRequest[]>)[]) => async () => (await Promise.all(factories.map((f) => f()))).flat();
const withOurTags = ['instance', 'volume', 'network-interface'].map((ResourceType) => ({
  ResourceType: ResourceType as 'instance',
  Tags: Object.entries(ourTags).map(([Key, Value]) => ({ Key, Value })),
}));

type Requests = () => Promise<AuthorizationRequest[]>;

/** What every deployment reads, whatever its actuator. */
const READS: [string, Requests][] = [
  ['the state table’s items', all(['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'ConditionCheckItem'].map((a) => one(`dynamodb:${a}`, tableArn)))],
  ['eks:DescribeCluster of this cluster', one('eks:DescribeCluster', 'arn:aws:eks:eu-west-1:123456789012:cluster/prod-eks')],
  ['each EC2 Describe the code sends, in the deployment’s region', all(ec2DescribesInSource().map((action) => one(action, '*')))],
  ['pricing:GetProducts from the Pricing API region that serves this one', one('pricing:GetProducts', '*', {}, { ...where, region: pricingEndpointRegion(where.region) })],
];

/** What the `ec2` actuator does on top of the reads. */
const EC2_ACTUATOR: [string, Requests][] = [
  ['every authorization of the launcher’s on-demand launch and its termination', () => launcherAuthorizations('on-demand')],
  ['every authorization of the launcher’s spot launch and its termination', () => launcherAuthorizations('spot')],
  ['tagging a new instance while launching it', one('ec2:CreateTags', instance('i-0new'), { ...tagContext('aws:RequestTag', ourTags), 'ec2:CreateAction': 'CreateFleet' })],
  ['passing the node role to EC2', one('iam:PassRole', nodeRole, { 'iam:PassedToService': 'ec2.amazonaws.com' })],
  ['terminating our replacement of this cluster', terminate({ 'eks-consolidator/managed': 'true', 'kubernetes.io/cluster/prod-eks': 'owned' })],
  ['terminating a Karpenter node of this cluster', terminate({ 'karpenter.sh/nodepool': 'default', 'kubernetes.io/cluster/prod-eks': 'owned' })],
];

/**
 * What no deployment may do, as [name, requests, which of them are denied]: every request whose
 * `action resource` matches the pattern must be denied and every other one allowed, so that a row
 * fails for the reason it names and not for another.
 */
const DENIED: [string, Requests, RegExp][] = [
  ['ec2:DescribeInstanceAttribute (it returns instances’ user data)', one('ec2:DescribeInstanceAttribute', instance('i-0abc')), /./],
  ['ec2:DescribeKeyPairs', one('ec2:DescribeKeyPairs', '*'), /./],
  ['ec2:DescribeVpnConnections (their configuration holds the tunnels’ keys)', one('ec2:DescribeVpnConnections', '*'), /./],
  ['the code’s EC2 Describes in another region', all(ec2DescribesInSource().map((action) => one(action, '*', {}, { ...where, region: 'us-east-1' }))), /./],
  [
    'a RunInstances without a launch template (any AMI, any user data), even tagged as ours',
    () =>
      runInstancesAuthorizations(
        { ImageId: 'ami-0anything', InstanceType: 'm5.large', MinCount: 1, MaxCount: 1, SubnetId: 'subnet-a', SecurityGroupIds: ['sg-0123'], UserData: 'IyEvYmluL3NoCg==', TagSpecifications: withOurTags },
        undefined,
        where,
      ),
    /^ec2:RunInstances /,
  ],
  [
    'a RunInstances from our launch template that gives its own security groups',
    () =>
      runInstancesAuthorizations(
        { LaunchTemplate: { LaunchTemplateId: goodTemplate.id, Version: '$Default' }, MinCount: 1, MaxCount: 1, SubnetId: 'subnet-a', SecurityGroupIds: ['sg-0open'], TagSpecifications: withOurTags },
        goodTemplate,
        where,
      ),
    /^ec2:RunInstances \S+:security-group\//,
  ],
  [
    'a CreateFleet whose overrides replace the launch template’s AMI',
    async () => {
      const input = await launcherRequest('on-demand');
      const configs = input.LaunchTemplateConfigs!.map((c) => ({ ...c, Overrides: c.Overrides!.map((o) => ({ ...o, ImageId: 'ami-0other' })) }));
      return createFleetAuthorizations({ ...input, LaunchTemplateConfigs: configs }, goodTemplate, where);
    },
    /^ec2:RunInstances \S+:image\/ami-0other$/,
  ],
  [
    'a CreateFleet from another cluster’s launch template',
    async () => createFleetAuthorizations(await launcherRequest('on-demand'), { ...goodTemplate, tags: { 'kubernetes.io/cluster/other-eks': 'owned' } }, where),
    /launch-template\//,
  ],
  ['a CreateFleet from an untagged launch template', async () => createFleetAuthorizations(await launcherRequest('on-demand'), { ...goodTemplate, tags: {} }, where), /launch-template\//],
  ['a CreateFleet tagged for another cluster', async () => createFleetAuthorizations(await launcherRequest('on-demand', 'other-eks'), goodTemplate, where), /:(instance|volume|fleet)\//],
  [
    'a launch template that does not tag network interfaces',
    async () => createFleetAuthorizations(await launcherRequest('on-demand'), { ...goodTemplate, tagSpecifications: {} }, where),
    /network-interface\//,
  ],
  ['a launch template naming a key pair', async () => createFleetAuthorizations(await launcherRequest('on-demand'), { ...goodTemplate, keyName: 'ops' }, where), /key-pair\//],
  [
    'a launch template naming a placement group',
    async () => createFleetAuthorizations(await launcherRequest('on-demand'), { ...goodTemplate, placementGroup: 'cluster-pg' }, where),
    /placement-group\//,
  ],
  ['a launch template whose instance profile holds another role', async () => createFleetAuthorizations(await launcherRequest('on-demand'), { ...goodTemplate, instanceProfileRole: 'Admin' }, where), /role\/Admin$/],
  ['passing another role to EC2', one('iam:PassRole', 'arn:aws:iam::123456789012:role/Admin', { 'iam:PassedToService': 'ec2.amazonaws.com' }), /./],
  ['passing the node role to another service', one('iam:PassRole', nodeRole, { 'iam:PassedToService': 'lambda.amazonaws.com' }), /./],
  ['terminating an untagged instance', terminate({}), /./],
  ['terminating a managed node group instance of this cluster (no nodepool tag)', terminate({ 'kubernetes.io/cluster/prod-eks': 'owned', 'eks:nodegroup-name': 'ng' }), /./],
  ['terminating a Karpenter node of another cluster', terminate({ 'karpenter.sh/nodepool': 'default', 'kubernetes.io/cluster/other-eks': 'owned' }), /./],
  ['terminating our replacement of another cluster', terminate({ 'eks-consolidator/managed': 'true', 'kubernetes.io/cluster/other-eks': 'owned' }), /./],
  ['tagging an existing instance', one('ec2:CreateTags', instance('i-0old'), tagContext('aws:RequestTag', { 'kubernetes.io/cluster/prod-eks': 'owned' })), /./],
  ['tagging a new instance as another cluster’s', one('ec2:CreateTags', instance('i-0new'), { ...tagContext('aws:RequestTag', { 'kubernetes.io/cluster/other-eks': 'owned' }), 'ec2:CreateAction': 'RunInstances' }), /./],
  ['scanning, creating or deleting tables', all(['Scan', 'DeleteTable', 'CreateTable'].map((a) => one(`dynamodb:${a}`, tableArn))), /./],
  ['writing another table', one('dynamodb:PutItem', tableArn.replace('prod-state', 'other')), /./],
  ['eks:DescribeCluster of another cluster', one('eks:DescribeCluster', 'arn:aws:eks:eu-west-1:123456789012:cluster/other'), /./],
  [
    'EC2 and IAM writes the code never makes',
    all([
      one('ec2:DeleteVolume', 'arn:aws:ec2:eu-west-1:123456789012:volume/vol-0abc'),
      one('ec2:ModifyInstanceAttribute', instance('i-0abc')),
      one('ec2:StopInstances', instance('i-0abc')),
      one('ec2:CreateLaunchTemplate', 'arn:aws:ec2:eu-west-1:123456789012:launch-template/lt-0new'),
      one('iam:CreateRole', 'arn:aws:iam::123456789012:role/new'),
    ]),
    /./,
  ],
];

/** `action resource` of each request, with whether `policies` allow it. */
async function verdicts(policies: Readonly<Record<string, PolicyDocument>>, requests: readonly AuthorizationRequest[]) {
  const out: { readonly line: string; readonly allowed: boolean }[] = [];
  for (const r of requests) out.push({ line: `${r.action} ${r.resource}`, allowed: (await simulate(policies, r, where.accountId)).allowed });
  return out;
}
const deniedLines = async (policies: Readonly<Record<string, PolicyDocument>>, requests: readonly AuthorizationRequest[]) =>
  (await verdicts(policies, requests)).filter((v) => !v.allowed).map((v) => v.line);

describe('the packaged CloudFormation template', () => {
  let template: Cfn;
  let policies: Readonly<Record<string, PolicyDocument>>;
  let karpenterTemplate: Cfn;
  let karpenter: RolePolicies;

  beforeAll(async () => {
    // One after the other: serverless-esbuild builds in the service's .esbuild directory.
    template = await slsPackage([]);
    karpenterTemplate = await slsPackage(['--param=actuator=karpenter']);
    policies = rolePolicies(deployedResources(template), 'IamRoleLambdaExecution').ours;
    karpenter = rolePolicies(deployedResources(karpenterTemplate), 'IamRoleLambdaExecution');
  }, 360_000);

  it('has no Serverless variable left anywhere, and the cluster name in the condition keys', () => {
    const whole = JSON.stringify(template);
    expect(whole).not.toMatch(/\$\{(param|self|opt|sls|env|file):/);
    const keys = Object.values(policies).flatMap((p) => p.Statement.flatMap((s) => Object.values(s.Condition ?? {}).flatMap((c) => Object.keys(c))));
    expect(keys).toContain('aws:RequestTag/kubernetes.io/cluster/prod-eks');
    expect(keys).toContain('aws:ResourceTag/kubernetes.io/cluster/prod-eks');
    expect(keys.filter((k) => k.includes('${'))).toEqual([]);
    const role = template['Resources']['IamRoleLambdaExecution']['Properties'];
    expect(role.ManagedPolicyArns).toContainEqual({ Ref: 'ConsolidatorPolicy' });
    // The framework's own inline statements are about the functions' logs only.
    const inline = (role.Policies ?? []).flatMap((p: { PolicyDocument: { Statement: { Action: string[] }[] } }) => p.PolicyDocument.Statement.flatMap((s) => s.Action));
    expect(inline.every((a: string) => a.startsWith('logs:'))).toBe(true);
  });

  it('compiles the interruption function\'s EventBridge rules: enabled by default, disabled with `karpenter` (no instance of ours to look after)', () => {
    for (const compiled of [template, karpenterTemplate]) {
      const resources = Object.values(compiled['Resources'] as Record<string, Cfn>);
      const target = JSON.stringify({ 'Fn::GetAtt': ['InterruptionLambdaFunction', 'Arn'] });
      const rules = resources.filter((r) => r['Type'] === 'AWS::Events::Rule' && r['Properties']['Targets'].some((t: Cfn) => JSON.stringify(t['Arn']) === target));
      expect(rules.map((r) => r['Properties']['EventPattern'])).toEqual([
        { source: ['aws.ec2'], 'detail-type': ['EC2 Spot Instance Interruption Warning', 'EC2 Instance Rebalance Recommendation'] },
        { source: ['aws.ec2'], 'detail-type': ['EC2 Instance State-change Notification'], detail: { state: ['stopping', 'stopped', 'shutting-down', 'terminated'] } },
        { source: ['aws.health'], 'detail-type': ['AWS Health Event'], detail: { service: ['EC2'], eventTypeCategory: ['scheduledChange'], eventTypeCode: [{ prefix: 'AWS_EC2_' }] } },
      ]);
      const state = compiled === template ? 'ENABLED' : 'DISABLED';
      expect(rules.map((r) => r['Properties']['State'])).toEqual([state, state, state]);
      const invokers = resources.filter((r) => r['Type'] === 'AWS::Lambda::Permission' && JSON.stringify(r['Properties']['FunctionName']).includes('InterruptionLambdaFunction'));
      expect(invokers.map((p) => p['Properties']['Principal'])).toEqual(['events.amazonaws.com', 'events.amazonaws.com', 'events.amazonaws.com']);
      const retries = resources.find((r) => r['Type'] === 'AWS::Lambda::EventInvokeConfig' && JSON.stringify(r['Properties']['FunctionName']).includes('InterruptionLambdaFunction'));
      expect(retries?.['Properties']).toMatchObject({ MaximumRetryAttempts: 2 });
      // The functions' one role: the interruption function needs nothing the others do not have.
      expect(compiled['Resources']['InterruptionLambdaFunction']['Properties']).toMatchObject({
        Handler: 'src/handlers/index.interruption',
        Timeout: 150,
        Role: { 'Fn::GetAtt': ['IamRoleLambdaExecution', 'Arn'] },
      });
    }
    expect(karpenterTemplate['Resources']['InterruptionLambdaFunction']['Properties']['Environment']['Variables']['ACTUATOR']).toBe('karpenter');
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

  it('names each EC2 Describe the code sends, and no other EC2 read', () => {
    const actions = Object.values(policies).flatMap((p) => p.Statement.flatMap((s) => ([] as string[]).concat(s.Action ?? [])));
    const reads = [...new Set(actions.filter((a) => /^ec2:(Describe|Get|List)/.test(a)))].sort();
    expect(ec2DescribesInSource().length).toBeGreaterThan(5);
    expect(reads).toEqual(ec2DescribesInSource());
  });

  it.each([...READS, ...EC2_ACTUATOR])('allows %s', async (_name, requests) => {
    const requested = await requests();
    expect(requested.length).toBeGreaterThan(0);
    expect(await deniedLines(policies, requested)).toEqual([]);
  });

  it.each(DENIED)('denies %s', async (_name, requests, denied) => {
    const judged = await verdicts(policies, await requests());
    expect(judged.some((v) => !v.allowed)).toBe(true);
    expect(judged.filter((v) => v.allowed === denied.test(v.line)).map((v) => `${v.allowed ? 'allowed' : 'denied'}: ${v.line}`)).toEqual([]);
  });

  it.each(READS)('with `karpenter`, still allows %s', async (_name, requests) => {
    expect(await deniedLines(karpenter.ours, await requests())).toEqual([]);
  });

  it.each(EC2_ACTUATOR)('with `karpenter`, denies every write of %s', async (_name, requests) => {
    const writes = (await requests()).filter((r) => !r.action.startsWith('ec2:Describe'));
    expect(writes.length).toBeGreaterThan(0);
    expect((await verdicts(karpenter.ours, writes)).filter((v) => v.allowed).map((v) => v.line)).toEqual([]);
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

  it('are handed over: Karpenter no longer consolidates them, and the annotation holds the settings', async () => {
    const { readNodePoolsFile } = await import('../../src/adapters/files/index.ts');
    const pools = await readNodePoolsFile(join(root, 'infra/nodepools.example.yaml'));
    for (const pool of pools) {
      expect(pool, pool.name).toMatchObject({ handedOver: true, karpenterConsolidates: false });
    }
    // The annotation's settings, not spec.disruption's `Never`, are what the functions act on.
    expect(pools.map((p) => [p.name, p.consolidateAfterMs, p.budgets.length])).toEqual([
      ['general', 5 * 60_000, 2],
      ['batch', 2 * 60_000, 1],
    ]);
  });
});
