// The `InstanceDirectory` port on EC2: one DescribeInstances by id (a read the functions' role already
// has) and the verdict on its tags. An instance is ours when it carries the two tags the launcher puts
// on every replacement it starts (ec2Launcher.ts): `eks-consolidator/managed=true` and this cluster's
// `kubernetes.io/cluster/<name>=owned`. Anything else (Karpenter's nodes, a node group's, another
// cluster's replacements) belongs to someone with interruption handling of its own.
import { DescribeInstancesCommand, type EC2Client, type Instance, type Tag } from '@aws-sdk/client-ec2';
import { InstanceApiError, type InstanceState } from '../../core/ports/actuator.ts';
import type { InstanceDirectory, InstanceOwnership } from '../../core/ports/instances.ts';
import { clusterTagKey, InstanceTags } from './ec2Launcher.ts';
import { describeError } from './errors.ts';

export interface Ec2InstanceDirectoryOptions {
  readonly client: EC2Client;
  readonly clusterName: string;
}

const STATES: ReadonlySet<string> = new Set(['pending', 'running', 'stopping', 'stopped', 'shutting-down', 'terminated']);

export class Ec2InstanceDirectory implements InstanceDirectory {
  private readonly client: EC2Client;
  private readonly clusterTag: string;

  constructor(options: Ec2InstanceDirectoryOptions) {
    this.client = options.client;
    this.clusterTag = clusterTagKey(options.clusterName);
  }

  async ownership(instanceId: string): Promise<InstanceOwnership> {
    let instance: Instance | undefined;
    try {
      const answer = await this.client.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
      instance = answer.Reservations?.flatMap((r) => r.Instances ?? []).find((i) => i.InstanceId === instanceId);
    } catch (error) {
      if (isNotFound(error)) return { found: false };
      throw new InstanceApiError('ec2:DescribeInstances', instanceId, describeError(error), { cause: error });
    }
    const state = instance?.State?.Name;
    if (instance === undefined || state === undefined || !STATES.has(state)) return { found: false };
    const managed = tagValue(instance.Tags, InstanceTags.managed);
    const cluster = tagValue(instance.Tags, this.clusterTag);
    const why =
      managed !== 'true'
        ? `it does not carry ${InstanceTags.managed}=true, so this product did not launch it`
        : cluster !== 'owned'
          ? `it does not carry ${this.clusterTag}=owned, so it is not this cluster's`
          : undefined;
    const zone = instance.Placement?.AvailabilityZone;
    return {
      found: true,
      state: state as Exclude<InstanceState, 'notFound'>,
      ours: why === undefined,
      ...(why === undefined ? {} : { why }),
      ...(zone === undefined ? {} : { zone }),
      capacityType: instance.InstanceLifecycle === 'spot' ? 'spot' : 'on-demand',
    };
  }
}

function tagValue(tags: readonly Tag[] | undefined, key: string): string | undefined {
  return tags?.find((t) => t.Key === key)?.Value;
}

function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; Code?: string } | undefined;
  return e?.name === 'InvalidInstanceID.NotFound' || e?.Code === 'InvalidInstanceID.NotFound' || e?.name === 'InvalidInstanceID.Malformed';
}
