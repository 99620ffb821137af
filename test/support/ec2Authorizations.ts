// The authorizations EC2 asks IAM for when an instant fleet is created, as AWS documents them for
// CreateFleet (which an instant fleet also checks as RunInstances): one per resource the launch uses
// or creates, with the tags of the request (TagSpecifications of the call for the fleet, instances
// and volumes; the launch template's own TagSpecifications for network interfaces and spot requests),
// one ec2:CreateTags per tagged resource type with ec2:CreateAction, and iam:PassRole for the
// instance profile's role. Used to check our policy against the launcher's real request.
import type { CreateFleetCommandInput } from '@aws-sdk/client-ec2';
import type { AuthorizationRequest } from './iamPolicy.ts';

export interface LaunchTemplateFacts {
  readonly id: string;
  readonly tags: Readonly<Record<string, string>>;
  /** The template data's TagSpecifications, per resource type. */
  readonly tagSpecifications: Readonly<Record<string, Readonly<Record<string, string>>>>;
  readonly imageId: string;
  readonly securityGroupIds: readonly string[];
  readonly instanceProfileRole: string;
}

export interface Where {
  readonly partition: string;
  readonly region: string;
  readonly accountId: string;
}

const tagsOf = (input: CreateFleetCommandInput, type: string): Record<string, string> | undefined => {
  const specification = input.TagSpecifications?.find((s) => s.ResourceType === type);
  return specification === undefined ? undefined : Object.fromEntries((specification.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
};

export function createFleetAuthorizations(input: CreateFleetCommandInput, template: LaunchTemplateFacts, where: Where): AuthorizationRequest[] {
  const arn = (type: string, id: string, account = where.accountId) => `arn:${where.partition}:ec2:${where.region}:${account}:${type}/${id}`;
  const spot = input.TargetCapacitySpecification?.DefaultTargetCapacityType === 'spot';
  const created: { type: string; id: string; tags: Record<string, string> | undefined }[] = [
    { type: 'fleet', id: 'fleet-0new', tags: tagsOf(input, 'fleet') },
    { type: 'instance', id: 'i-0new', tags: tagsOf(input, 'instance') },
    { type: 'volume', id: 'vol-0new', tags: tagsOf(input, 'volume') },
    { type: 'network-interface', id: 'eni-0new', tags: template.tagSpecifications['network-interface'] },
    ...(spot ? [{ type: 'spot-instances-request', id: 'sir-0new', tags: template.tagSpecifications['spot-instances-request'] }] : []),
  ];
  const subnets = new Set((input.LaunchTemplateConfigs ?? []).flatMap((c) => (c.Overrides ?? []).map((o) => o.SubnetId ?? '')));
  const used: AuthorizationRequest[] = [
    ...[...subnets].map((id) => ({ action: '', resource: arn('subnet', id) })),
    ...template.securityGroupIds.map((id) => ({ action: '', resource: arn('security-group', id) })),
    { action: '', resource: `arn:${where.partition}:ec2:${where.region}::image/${template.imageId}` },
    { action: '', resource: arn('launch-template', template.id), resourceTags: template.tags },
  ];
  const requests: AuthorizationRequest[] = [];
  for (const action of ['ec2:CreateFleet', 'ec2:RunInstances']) {
    for (const resource of created) requests.push({ action, resource: arn(resource.type, resource.id), requestTags: resource.tags ?? {} });
    for (const resource of used) requests.push({ ...resource, action });
  }
  for (const resource of created) {
    if (resource.tags === undefined || Object.keys(resource.tags).length === 0) continue;
    requests.push({ action: 'ec2:CreateTags', resource: arn(resource.type, resource.id), requestTags: resource.tags, context: { 'ec2:CreateAction': 'CreateFleet' } });
  }
  requests.push({
    action: 'iam:PassRole',
    resource: `arn:${where.partition}:iam::${where.accountId}:role/${template.instanceProfileRole}`,
    context: { 'iam:PassedToService': 'ec2.amazonaws.com' },
  });
  return requests;
}
