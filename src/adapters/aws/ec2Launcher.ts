// The actuator's `InstanceLauncher` port on EC2: one instant EC2 Fleet per replacement, as Karpenter
// launches, so EC2 picks the type and zone among every allowed offering (price-capacity-optimized for
// spot, lowest-price for on-demand).
//
// Launch settings come from the NodePool's annotations (`NodePool.launch`):
//   eks-consolidator/launch-template          launch template id (`lt-...`) or name        (required)
//   eks-consolidator/launch-template-version  version, default `$Default`
//   eks-consolidator/subnets                  comma-separated subnet ids, one per zone      (required)
// The launch template carries everything else (AMI, instance profile, security groups, user data that
// joins the cluster with the pool's labels and taints).
//
// What the IAM policy (serverless.yml ConsolidatorPolicy = infra/iam.yml) demands of a launch, and so
// what this launcher does or checks first, with a configuration error naming what is missing instead
// of EC2's bare UnauthorizedOperation:
// - the instance, its volumes and the fleet are tagged in the request (TagSpecifications) with
//   eks-consolidator/managed=true, kubernetes.io/cluster/<cluster>=owned and karpenter.sh/nodepool;
// - the launch template itself carries kubernetes.io/cluster/<cluster>=owned (only this cluster's
//   templates may be launched from);
// - the template's own TagSpecifications tag network interfaces (and, for spot, spot requests) with
//   kubernetes.io/cluster/<cluster>=owned: CreateFleet cannot tag those itself.
//
// Idempotency per command: before launching, an instance tagged with the command id is looked for and
// reused; the CreateFleet ClientToken is derived from the command id, so a retried call whose first
// answer was lost gets the same fleet back instead of a second instance.
//
// Termination (`terminate(id, { requireOurTag })`):
// - `requireOurTag: true` — for replacements we launched: the instance must carry
//   `eks-consolidator/managed=true`, checked with DescribeInstances first; otherwise
//   `TerminationRefusedError`. The Lambda's IAM policy should enforce the same condition
//   (`aws:ResourceTag/eks-consolidator/managed`), this check is the first line.
// - `requireOurTag: false` — for the old nodes being consolidated, which Karpenter or a node group
//   launched and which therefore carry none of our tags; the executor passes the instance id from the
//   node's providerID and only after the node's pods have left. Scope the IAM permission for these by
//   the cluster's tags (e.g. `aws:ResourceTag/karpenter.sh/nodepool`). Caveat: an instance in an Auto
//   Scaling group (a managed node group) is replaced by the group after termination.
// An instance that is already shutting down, terminated or unknown is `alreadyGone`: no second
// TerminateInstances call.
import { createHash } from 'node:crypto';
import {
  CreateFleetCommand,
  DescribeInstancesCommand,
  DescribeLaunchTemplatesCommand,
  DescribeLaunchTemplateVersionsCommand,
  DescribeSubnetsCommand,
  TerminateInstancesCommand,
  type CreateFleetCommandInput,
  type EC2Client,
  type Filter,
  type FleetLaunchTemplateOverridesRequest,
  type Instance,
  type LaunchTemplateTagSpecification,
  type ResourceType,
  type Tag,
  type _InstanceType,
} from '@aws-sdk/client-ec2';
import type { CapacityType, NodePool } from '../../core/model/types.ts';
import {
  InstanceApiError,
  LaunchError,
  TerminationRefusedError,
  type InstanceLauncher,
  type InstanceState,
  type LaunchRequest,
  type LaunchedInstance,
  type OurInstance,
  type TerminateOptions,
  type TerminateResult,
} from '../../core/ports/actuator.ts';
import { describeError } from './errors.ts';

export const LaunchSettingKeys = {
  template: 'eks-consolidator/launch-template',
  templateVersion: 'eks-consolidator/launch-template-version',
  subnets: 'eks-consolidator/subnets',
} as const;

export const InstanceTags = {
  /** `true` on every instance this product launched: the only ones `requireOurTag` lets it terminate. */
  managed: 'eks-consolidator/managed',
  /** The command that launched the instance: finds it again after a lost answer or a crash. */
  command: 'eks-consolidator/command',
  nodePool: 'karpenter.sh/nodepool',
  name: 'Name',
} as const;

/** Karpenter sends at most 60 instance types per launch; more adds little choice and a bigger request. */
export const MAX_INSTANCE_TYPES = 60;
/** EC2 Fleet's documented ceiling of overrides for request/maintain fleets; kept for instant too. */
export const MAX_OVERRIDES = 300;

export interface Ec2LauncherOptions {
  readonly client: EC2Client;
  /**
   * Goes into the Name tag (`<cluster>/<pool>`) and the `kubernetes.io/cluster/<cluster>=owned` tag that
   * the IAM policy requires; with it, the launch template is checked against the policy before a launch.
   */
  readonly clusterName?: string;
  /** More tags for every launched instance (e.g. `kubernetes.io/cluster/<name>: owned`). */
  readonly extraTags?: Readonly<Record<string, string>>;
}

interface LaunchSettings {
  readonly template: { LaunchTemplateId: string } | { LaunchTemplateName: string };
  readonly version: string;
  readonly subnetIds: readonly string[];
}

export class Ec2InstanceLauncher implements InstanceLauncher {
  private readonly client: EC2Client;
  private readonly clusterName: string | undefined;
  private readonly extraTags: Readonly<Record<string, string>>;

  constructor(options: Ec2LauncherOptions) {
    this.client = options.client;
    this.clusterName = options.clusterName;
    this.extraTags = options.extraTags ?? {};
  }

  async launch(request: LaunchRequest): Promise<LaunchedInstance> {
    const existing = await this.findByCommand(request.commandId);
    if (existing !== undefined) return existing;

    const settings = launchSettings(request.nodePool);
    if (this.clusterName !== undefined) await this.checkLaunchTemplate(settings, request);
    const subnetZones = await this.subnetZones(settings.subnetIds);
    const input = fleetRequest(request, settings, subnetZones, this.tags(request));
    let answer;
    try {
      answer = await this.client.send(new CreateFleetCommand(input));
    } catch (error) {
      const code = (error as { name?: string }).name ?? '';
      const failure = /^(InvalidLaunchTemplate|InvalidParameter|IdempotentParameterMismatch|InvalidSubnet)/.test(code) ? 'configuration' : 'api';
      throw new LaunchError(failure, `ec2:CreateFleet: ${describeError(error)}`, { cause: error });
    }
    const fleetInstances = answer.Instances ?? [];
    for (const launched of fleetInstances) {
      const instanceId = launched.InstanceIds?.[0];
      if (instanceId === undefined) continue;
      const zone = launched.LaunchTemplateAndOverrides?.Overrides?.AvailabilityZone ?? zoneOfSubnet(subnetZones, launched.LaunchTemplateAndOverrides?.Overrides?.SubnetId);
      return compact({
        instanceId,
        instanceType: launched.InstanceType,
        zone,
        capacityType: launched.Lifecycle === 'spot' ? 'spot' : launched.Lifecycle === 'on-demand' ? 'on-demand' : undefined,
        reused: false,
      });
    }
    const errors = answer.Errors ?? [];
    const codes = [...new Set(errors.map((e) => e.ErrorCode ?? 'Unknown'))];
    const detail = errors
      .slice(0, 5)
      .map((e) => `${e.ErrorCode ?? 'Unknown'}${e.LaunchTemplateAndOverrides?.Overrides?.InstanceType ? ` (${e.LaunchTemplateAndOverrides.Overrides.InstanceType})` : ''}: ${e.ErrorMessage ?? ''}`.trim())
      .join('; ');
    const configuration = codes.some((c) => /^Invalid|Unauthorized|NotFound/i.test(c)) && !codes.some(isCapacityCode);
    throw new LaunchError(
      configuration ? 'configuration' : 'capacity',
      errors.length === 0 ? 'ec2:CreateFleet returned no instance and no error' : `ec2:CreateFleet launched nothing: ${detail}`,
    );
  }

  async terminate(instanceId: string, options: TerminateOptions): Promise<TerminateResult> {
    const instance = await this.describeInstance(instanceId);
    if (instance === undefined || isGone(instance)) return 'alreadyGone';
    if (options.requireOurTag && tagValue(instance.Tags, InstanceTags.managed) !== 'true') {
      throw new TerminationRefusedError(instanceId, `it does not carry ${InstanceTags.managed}=true, so this product did not launch it`);
    }
    try {
      await this.client.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
    } catch (error) {
      if (isNotFound(error)) return 'alreadyGone';
      throw new InstanceApiError('ec2:TerminateInstances', instanceId, describeError(error), { cause: error });
    }
    return 'terminating';
  }

  async describe(instanceId: string): Promise<InstanceState> {
    const instance = await this.describeInstance(instanceId);
    if (instance === undefined) return 'notFound';
    return (instance.State?.Name as InstanceState | undefined) ?? 'notFound';
  }

  // -------------------------------------------------------------------------------------------------

  private async describeInstance(instanceId: string): Promise<Instance | undefined> {
    try {
      const answer = await this.client.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
      return answer.Reservations?.flatMap((r) => r.Instances ?? []).find((i) => i.InstanceId === instanceId);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw new InstanceApiError('ec2:DescribeInstances', instanceId, describeError(error), { cause: error });
    }
  }

  /** A live instance an earlier attempt of this command launched (the newest), if any. */
  async findByCommand(commandId: string): Promise<LaunchedInstance | undefined> {
    let found: Instance[];
    try {
      found = await this.describeAll([
        { Name: `tag:${InstanceTags.command}`, Values: [commandId] },
        { Name: 'instance-state-name', Values: ['pending', 'running'] },
      ]);
    } catch (error) {
      throw new LaunchError('api', `ec2:DescribeInstances (instances of command ${commandId}): ${describeError(error)}`, { cause: error });
    }
    const newest = found.sort((a, b) => (b.LaunchTime?.getTime() ?? 0) - (a.LaunchTime?.getTime() ?? 0))[0];
    return newest === undefined ? undefined : { ...describeLaunched(newest), reused: true };
  }

  /**
   * Every pending or running instance carrying our managed tag (and this cluster's tag, when the
   * cluster is known): what the sweep compares with the unfinished commands.
   */
  async listOurs(): Promise<readonly OurInstance[]> {
    let found: Instance[];
    try {
      found = await this.describeAll([
        { Name: `tag:${InstanceTags.managed}`, Values: ['true'] },
        ...(this.clusterName === undefined ? [] : [{ Name: `tag:${clusterTagKey(this.clusterName)}`, Values: ['owned'] }]),
        { Name: 'instance-state-name', Values: ['pending', 'running'] },
      ]);
    } catch (error) {
      throw new InstanceApiError('ec2:DescribeInstances', `tag:${InstanceTags.managed}=true`, describeError(error), { cause: error });
    }
    return found
      .filter((i) => i.InstanceId !== undefined && tagValue(i.Tags, InstanceTags.managed) === 'true')
      .map((i) =>
        compact({
          instanceId: i.InstanceId!,
          launchKey: tagValue(i.Tags, InstanceTags.command),
          launchedAt: i.LaunchTime?.getTime(),
          state: (i.State?.Name as InstanceState | undefined) ?? 'pending',
          nodePool: tagValue(i.Tags, InstanceTags.nodePool),
          instanceType: i.InstanceType,
          zone: i.Placement?.AvailabilityZone,
          capacityType: i.InstanceLifecycle === 'spot' ? ('spot' as const) : ('on-demand' as const),
        }),
      );
  }

  /** Every instance matching the filters, all pages. */
  private async describeAll(filters: Filter[]): Promise<Instance[]> {
    const found: Instance[] = [];
    let nextToken: string | undefined;
    do {
      const answer = await this.client.send(new DescribeInstancesCommand({ Filters: filters, ...(nextToken === undefined ? {} : { NextToken: nextToken }) }));
      found.push(...(answer.Reservations ?? []).flatMap((r) => r.Instances ?? []));
      nextToken = answer.NextToken;
    } while (nextToken);
    return found;
  }

  private async subnetZones(subnetIds: readonly string[]): Promise<ReadonlyMap<string, string>> {
    try {
      const answer = await this.client.send(new DescribeSubnetsCommand({ SubnetIds: [...subnetIds] }));
      const zones = new Map<string, string>();
      for (const subnet of answer.Subnets ?? []) {
        if (subnet.SubnetId !== undefined && subnet.AvailabilityZone !== undefined) zones.set(subnet.SubnetId, subnet.AvailabilityZone);
      }
      return zones;
    } catch (error) {
      const code = (error as { name?: string }).name ?? '';
      throw new LaunchError(code.startsWith('InvalidSubnet') ? 'configuration' : 'api', `ec2:DescribeSubnets: ${describeError(error)}`, { cause: error });
    }
  }

  /**
   * Refuses, as a configuration error, a launch template the IAM policy would refuse: not tagged as this
   * cluster's, or not tagging the network interfaces (and spot requests) it creates as this cluster's.
   */
  private async checkLaunchTemplate(settings: LaunchSettings, request: LaunchRequest): Promise<void> {
    const clusterTag = clusterTagKey(this.clusterName!);
    const named = 'LaunchTemplateId' in settings.template ? settings.template.LaunchTemplateId : settings.template.LaunchTemplateName;
    const where = `launch template ${named} (NodePool "${request.nodePool.name}")`;
    let template;
    let version;
    try {
      const templates = await this.client.send(
        new DescribeLaunchTemplatesCommand(
          'LaunchTemplateId' in settings.template ? { LaunchTemplateIds: [settings.template.LaunchTemplateId] } : { LaunchTemplateNames: [settings.template.LaunchTemplateName] },
        ),
      );
      template = templates?.LaunchTemplates?.[0];
      if (template !== undefined) {
        const versions = await this.client.send(
          new DescribeLaunchTemplateVersionsCommand({ LaunchTemplateId: template.LaunchTemplateId, Versions: [settings.version] }),
        );
        version = versions?.LaunchTemplateVersions?.[0];
      }
    } catch (error) {
      const code = (error as { name?: string }).name ?? '';
      const failure = /^InvalidLaunchTemplate|NotFound/.test(code) ? 'configuration' : 'api';
      throw new LaunchError(failure, `ec2:DescribeLaunchTemplates (${where}): ${describeError(error)}`, { cause: error });
    }
    if (template === undefined) throw new LaunchError('configuration', `${where} does not exist`);
    if (version === undefined) throw new LaunchError('configuration', `${where} has no version ${settings.version}`);
    if (tagValue(template.Tags, clusterTag) !== 'owned') {
      throw new LaunchError('configuration', `${where} is not tagged ${clusterTag}=owned, so the IAM policy lets no launch use it`);
    }
    const needTagged: ResourceType[] = ['network-interface', ...(request.replacement.capacityType === 'spot' ? (['spot-instances-request'] as const) : [])];
    const specifications: readonly LaunchTemplateTagSpecification[] = version.LaunchTemplateData?.TagSpecifications ?? [];
    for (const resourceType of needTagged) {
      const tags = specifications.find((spec) => spec.ResourceType === resourceType)?.Tags;
      if (tagValue(tags, clusterTag) !== 'owned') {
        throw new LaunchError(
          'configuration',
          `${where}, version ${settings.version}, does not tag ${resourceType} with ${clusterTag}=owned in its TagSpecifications, so the IAM policy refuses the launch`,
        );
      }
    }
  }

  private tags(request: LaunchRequest): Tag[] {
    const pool = request.nodePool.name;
    const tags: Record<string, string> = {
      ...this.extraTags,
      ...(this.clusterName === undefined ? {} : { [clusterTagKey(this.clusterName)]: 'owned' }),
      [InstanceTags.managed]: 'true',
      [InstanceTags.command]: request.commandId,
      [InstanceTags.nodePool]: pool,
      [InstanceTags.name]: this.clusterName === undefined ? `eks-consolidator/${pool}` : `${this.clusterName}/${pool}`,
    };
    return Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));
  }
}

/** The pool's launch settings, or a `configuration` LaunchError naming what is missing. */
export function launchSettings(pool: NodePool): LaunchSettings {
  const launch = pool.launch ?? {};
  const text = (key: string): string | undefined => {
    const value = launch[key];
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
  };
  const template = text(LaunchSettingKeys.template);
  if (template === undefined) {
    throw new LaunchError('configuration', `NodePool "${pool.name}" has no ${LaunchSettingKeys.template} annotation`);
  }
  const subnetIds = (text(LaunchSettingKeys.subnets) ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (subnetIds.length === 0) {
    throw new LaunchError('configuration', `NodePool "${pool.name}" has no ${LaunchSettingKeys.subnets} annotation`);
  }
  return {
    template: /^lt-[0-9a-f]+$/.test(template) ? { LaunchTemplateId: template } : { LaunchTemplateName: template },
    version: text(LaunchSettingKeys.templateVersion) ?? '$Default',
    subnetIds,
  };
}

/** The CreateFleet input for one instance of the replacement (exported for tests and dry inspection). */
export function fleetRequest(
  request: LaunchRequest,
  settings: LaunchSettings,
  subnetZones: ReadonlyMap<string, string>,
  tags: Tag[],
): CreateFleetCommandInput {
  const { replacement } = request;
  const allowedZones = new Set(replacement.zones);
  const subnets = settings.subnetIds.filter((id) => {
    const zone = subnetZones.get(id);
    return zone !== undefined && (allowedZones.size === 0 || allowedZones.has(zone));
  });
  if (subnets.length === 0) {
    throw new LaunchError(
      'configuration',
      `none of the subnets ${settings.subnetIds.join(', ')} of NodePool "${request.nodePool.name}" is in an allowed zone (${replacement.zones.join(', ') || 'any'})`,
    );
  }
  if (replacement.instanceTypes.length === 0) throw new LaunchError('configuration', 'the replacement allows no instance type');
  // Cheapest types first, so a cap keeps the cheap end of the list.
  const overrides: FleetLaunchTemplateOverridesRequest[] = [];
  for (const type of replacement.instanceTypes.slice(0, MAX_INSTANCE_TYPES)) {
    for (const subnet of subnets) overrides.push({ InstanceType: type as _InstanceType, SubnetId: subnet });
  }
  const capacityType: CapacityType = replacement.capacityType;
  return {
    Type: 'instant',
    ClientToken: clientToken(request.commandId),
    LaunchTemplateConfigs: [
      {
        LaunchTemplateSpecification: { ...settings.template, Version: settings.version },
        Overrides: overrides.slice(0, MAX_OVERRIDES),
      },
    ],
    TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: capacityType },
    ...(capacityType === 'spot'
      ? { SpotOptions: { AllocationStrategy: 'price-capacity-optimized' } }
      : { OnDemandOptions: { AllocationStrategy: 'lowest-price' } }),
    // The IAM policy requires these tags in the request on each of the three (infra/iam.yml).
    TagSpecifications: (['instance', 'volume', 'fleet'] as const).map((ResourceType) => ({ ResourceType, Tags: tags })),
  };
}

/** The tag that marks an AWS resource as one cluster's (EKS and Karpenter use the same). */
export function clusterTagKey(clusterName: string): string {
  return `kubernetes.io/cluster/${clusterName}`;
}

/** CreateFleet's idempotency token: at most 64 ASCII characters, the same for every attempt of a command. */
export function clientToken(commandId: string): string {
  return `eks-consolidator-${createHash('sha256').update(commandId).digest('hex').slice(0, 40)}`;
}

function describeLaunched(instance: Instance): Omit<LaunchedInstance, 'reused'> {
  return compact({
    instanceId: instance.InstanceId ?? '',
    instanceType: instance.InstanceType,
    zone: instance.Placement?.AvailabilityZone,
    capacityType: instance.InstanceLifecycle === 'spot' ? 'spot' : 'on-demand',
  });
}

function zoneOfSubnet(zones: ReadonlyMap<string, string>, subnetId: string | undefined): string | undefined {
  return subnetId === undefined ? undefined : zones.get(subnetId);
}

function isGone(instance: Instance): boolean {
  const state = instance.State?.Name;
  return state === 'shutting-down' || state === 'terminated';
}

function isCapacityCode(code: string): boolean {
  return /InsufficientInstanceCapacity|UnfulfillableCapacity|MaxSpotInstanceCountExceeded|InstanceLimitExceeded|SpotMaxPriceTooLow|VcpuLimitExceeded/i.test(code);
}

function isNotFound(error: unknown): boolean {
  return (error as { name?: string } | undefined)?.name === 'InvalidInstanceID.NotFound' || (error as { Code?: string } | undefined)?.Code === 'InvalidInstanceID.NotFound';
}

function tagValue(tags: readonly Tag[] | undefined, key: string): string | undefined {
  return tags?.find((t) => t.Key === key)?.Value;
}

function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
