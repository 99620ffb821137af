// The EC2 launcher: the CreateFleet request it builds, idempotency by command, fleet errors, and the
// termination guard.
import { CreateFleetCommand, DescribeInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { afterEach, describe, expect, it } from 'vitest';
import { clientToken, Ec2InstanceLauncher } from '../../src/adapters/aws/ec2Launcher.ts';
import { LaunchError, TerminationRefusedError, type LaunchRequest } from '../../src/core/ports/actuator.ts';
import { FakeEc2, POOL, replaceDecision } from './harness.ts';

let ec2: FakeEc2 | undefined;
afterEach(() => {
  ec2?.restore();
  ec2 = undefined;
});

function setup() {
  ec2 = new FakeEc2({ clusterName: 'prod' });
  return { ec2, launcher: new Ec2InstanceLauncher({ client: ec2.client, clusterName: 'prod', extraTags: { team: 'platform' } }) };
}

function request(overrides: Partial<LaunchRequest['replacement']> = {}, pool = POOL): LaunchRequest {
  return { commandId: 'cmd-42', nodePool: pool, replacement: { ...replaceDecision(['n']).replacements[0]!, ...overrides } };
}

describe('Ec2InstanceLauncher.launch', () => {
  it('asks for one instant on-demand instance over every allowed type in the allowed zone’s subnet', async () => {
    const { ec2, launcher } = setup();
    const launched = await launcher.launch(request({ zones: ['us-east-1a'] }));
    expect(launched).toMatchObject({ instanceId: 'i-0replacement00001', instanceType: 'm5.large', zone: 'us-east-1a', reused: false });
    expect(ec2.fleetRequests).toHaveLength(1);
    const input = ec2.fleetRequests[0]!;
    expect(input).toMatchObject({
      Type: 'instant',
      ClientToken: clientToken('cmd-42'),
      TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: 'on-demand' },
      OnDemandOptions: { AllocationStrategy: 'lowest-price' },
      LaunchTemplateConfigs: [
        {
          LaunchTemplateSpecification: { LaunchTemplateId: 'lt-0abc123', Version: '$Default' },
          Overrides: [
            { InstanceType: 'm5.large', SubnetId: 'subnet-a' },
            { InstanceType: 'm5a.large', SubnetId: 'subnet-a' },
          ],
        },
      ],
    });
    expect(input.SpotOptions).toBeUndefined();
    // The IAM policy wants these tags in the request on the instance, its volumes and the fleet.
    const tags = expect.arrayContaining([
      { Key: 'eks-consolidator/managed', Value: 'true' },
      { Key: 'kubernetes.io/cluster/prod', Value: 'owned' },
      { Key: 'eks-consolidator/command', Value: 'cmd-42' },
      { Key: 'karpenter.sh/nodepool', Value: 'default' },
      { Key: 'Name', Value: 'prod/default' },
      { Key: 'team', Value: 'platform' },
    ]);
    expect(input.TagSpecifications).toEqual([
      { ResourceType: 'instance', Tags: tags },
      { ResourceType: 'volume', Tags: tags },
      { ResourceType: 'fleet', Tags: tags },
    ]);
    expect(clientToken('cmd-42').length).toBeLessThanOrEqual(64);
  });

  it('uses spot with price-capacity-optimized, a template by name and version, and pairs types with every allowed zone', async () => {
    const { ec2, launcher } = setup();
    const pool = {
      ...POOL,
      launch: {
        'eks-consolidator/launch-template': 'eks-nodes',
        'eks-consolidator/launch-template-version': '7',
        'eks-consolidator/subnets': 'subnet-a,subnet-b',
      },
    };
    await launcher.launch(request({ capacityType: 'spot', zones: ['us-east-1a', 'us-east-1b'], instanceTypes: ['c5.large'] }, pool));
    const input = ec2.fleetRequests[0]!;
    expect(input.SpotOptions).toEqual({ AllocationStrategy: 'price-capacity-optimized' });
    expect(input.OnDemandOptions).toBeUndefined();
    expect(input.TargetCapacitySpecification?.DefaultTargetCapacityType).toBe('spot');
    expect(input.LaunchTemplateConfigs?.[0]).toEqual({
      LaunchTemplateSpecification: { LaunchTemplateName: 'eks-nodes', Version: '7' },
      Overrides: [
        { InstanceType: 'c5.large', SubnetId: 'subnet-a' },
        { InstanceType: 'c5.large', SubnetId: 'subnet-b' },
      ],
    });
  });

  it('reuses the instance an earlier attempt of the same command launched', async () => {
    const { ec2, launcher } = setup();
    const first = await launcher.launch(request());
    const again = await launcher.launch(request());
    expect(again).toMatchObject({ instanceId: first.instanceId, reused: true });
    expect(ec2.mock.commandCalls(CreateFleetCommand)).toHaveLength(1);
    const lookups = ec2.mock.commandCalls(DescribeInstancesCommand).map((c) => c.args[0].input.Filters);
    expect(lookups[0]).toEqual([
      { Name: 'tag:eks-consolidator/command', Values: ['cmd-42'] },
      { Name: 'instance-state-name', Values: ['pending', 'running'] },
    ]);
    expect(await launcher.findByCommand('cmd-other')).toBeUndefined();
  });

  it('turns fleet errors without an instance into a capacity LaunchError', async () => {
    const { ec2, launcher } = setup();
    ec2.fleetErrors = [{ ErrorCode: 'InsufficientInstanceCapacity', ErrorMessage: 'no m5.large capacity' }];
    const error = await launcher.launch(request()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LaunchError);
    expect(error).toMatchObject({ failure: 'capacity', retryable: false });
    expect((error as Error).message).toMatch(/InsufficientInstanceCapacity \(m5\.large\): no m5\.large capacity/);
  });

  it('refuses a pool without launch settings, or without a subnet in an allowed zone', async () => {
    const { ec2, launcher } = setup();
    await expect(launcher.launch(request({}, { ...POOL, launch: {} }))).rejects.toMatchObject({ failure: 'configuration', message: expect.stringMatching(/launch-template/) });
    await expect(launcher.launch(request({ zones: ['us-east-1c'] }))).rejects.toMatchObject({ failure: 'configuration', message: expect.stringMatching(/allowed zone/) });
    expect(ec2.fleetRequests).toEqual([]);
  });

  const owned = { 'kubernetes.io/cluster/prod': 'owned' };
  it.each([
    ['does not exist', undefined, 'on-demand', /launch template lt-0abc123 \(NodePool "default"\) does not exist|does not exist/],
    ['is another cluster’s', { tags: { 'kubernetes.io/cluster/other': 'owned' }, tagSpecifications: { 'network-interface': owned } }, 'on-demand', /is not tagged kubernetes\.io\/cluster\/prod=owned/],
    ['does not tag network interfaces', { tags: owned, tagSpecifications: { instance: owned } }, 'on-demand', /does not tag network-interface with kubernetes\.io\/cluster\/prod=owned/],
    ['does not tag spot requests (a spot launch)', { tags: owned, tagSpecifications: { 'network-interface': owned } }, 'spot', /does not tag spot-instances-request/],
  ] as const)('refuses, before CreateFleet, a launch template the IAM policy would refuse: one that %s', async (_name, template, capacityType, message) => {
    const { ec2, launcher } = setup();
    ec2.launchTemplates.set('placeholder', { id: 'lt-0placeholder', name: 'placeholder', tags: {}, tagSpecifications: {} });
    if (template !== undefined) ec2.launchTemplates.set('lt-0abc123', { id: 'lt-0abc123', name: 'nodes', ...template });
    const error = await launcher.launch(request({ capacityType })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LaunchError);
    expect(error).toMatchObject({ failure: 'configuration', message: expect.stringMatching(message) });
    expect(ec2.fleetRequests).toEqual([]);
  });

  it('launches from a template tagged as the policy wants, also on spot', async () => {
    const { ec2, launcher } = setup();
    ec2.launchTemplates.set('lt-0abc123', { id: 'lt-0abc123', name: 'nodes', tags: owned, tagSpecifications: { 'network-interface': owned, 'spot-instances-request': owned } });
    await launcher.launch(request({ capacityType: 'spot' }));
    expect(ec2.fleetRequests).toHaveLength(1);
  });

  it('calls an SDK failure of CreateFleet a retryable api failure', async () => {
    const { ec2, launcher } = setup();
    ec2.mock.on(CreateFleetCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'RequestLimitExceeded' }));
    await expect(launcher.launch(request())).rejects.toMatchObject({ failure: 'api', retryable: true });
  });
});

describe('Ec2InstanceLauncher.terminate', () => {
  it('terminates our own instance, once', async () => {
    const { ec2, launcher } = setup();
    const { instanceId } = await launcher.launch(request());
    expect(await launcher.terminate(instanceId, { requireOurTag: true })).toBe('terminating');
    expect(await launcher.terminate(instanceId, { requireOurTag: true })).toBe('alreadyGone');
    expect(ec2.terminateCalls).toEqual([instanceId]);
    expect(await launcher.describe(instanceId)).toBe('shutting-down');
  });

  it('refuses an instance without our tag when asked to, and terminates it when not', async () => {
    const { ec2, launcher } = setup();
    ec2.addExisting('i-0karpenter');
    await expect(launcher.terminate('i-0karpenter', { requireOurTag: true })).rejects.toBeInstanceOf(TerminationRefusedError);
    expect(ec2.mock.commandCalls(TerminateInstancesCommand)).toHaveLength(0);
    expect(await launcher.terminate('i-0karpenter', { requireOurTag: false })).toBe('terminating');
  });

  it('treats an unknown instance as already gone', async () => {
    const { ec2, launcher } = setup();
    expect(await launcher.terminate('i-0nothere', { requireOurTag: false })).toBe('alreadyGone');
    expect(await launcher.describe('i-0nothere')).toBe('notFound');
    expect(ec2.terminateCalls).toEqual([]);
  });
});
