// The `ec2` actuator's side of a command: replacements are instant EC2 Fleets from the pool's launch
// template (adapters/aws/ec2Launcher.ts), ready once their Node is Ready without start-up taints; old
// instances are terminated directly and their Node objects deleted.
import type { Node } from '../../../core/model/types.ts';
import type { InstanceLauncher, NodeOperations } from '../../../core/ports/actuator.ts';
import type { LaunchedReplacement } from '../../../core/state/types.ts';
import { launchKey, type Capacity, type Launched, type OldNode, type ReplacementLaunch, type ReplacementStatus } from './types.ts';
import { initialized } from './initialized.ts';

const GONE_STATES = new Set(['shutting-down', 'terminated', 'stopping', 'stopped', 'notFound']);

export function ec2Capacity(instances: InstanceLauncher, nodes: NodeOperations): Capacity {
  return {
    kind: 'ec2',

    async launch(request: ReplacementLaunch): Promise<Launched> {
      const launched = await instances.launch({ commandId: launchKey(request.commandId, request.index), nodePool: request.nodePool, replacement: request.replacement });
      const where = launched.instanceType ? ` (${launched.instanceType}${launched.zone ? ` in ${launched.zone}` : ''})` : '';
      return { ref: launched.instanceId, instanceId: launched.instanceId, reused: launched.reused, description: `instance ${launched.instanceId}${where}` };
    },

    async find(commandId, index) {
      const found = await instances.findByCommand(launchKey(commandId, index));
      return found === undefined ? undefined : { ref: found.instanceId, instanceId: found.instanceId };
    },

    async status(launched: LaunchedReplacement): Promise<ReplacementStatus> {
      const instanceId = launched.ref;
      // By name first (one GET); the name is only a hint: the instance id decides.
      let lookup = launched.nodeName === undefined ? undefined : await nodes.getNode(launched.nodeName);
      if (lookup === undefined || !lookup.exists || lookup.node.instanceId !== instanceId) lookup = await nodes.findNodeByInstanceId(instanceId);
      if (lookup.exists) {
        if (lookup.node.deleting) return { state: 'failed', why: `its Node ${lookup.node.name} is being deleted`, node: lookup.node };
        return lookup.ready && initialized(lookup.node) ? { state: 'initialized', node: lookup.node, instanceId } : { state: 'pending', node: lookup.node, instanceId };
      }
      const state = await instances.describe(instanceId);
      // EC2 is eventually consistent: an instance CreateFleet just returned may be unknown to
      // DescribeInstances for a while. Before it ever registered, "unknown" means "not yet": the Ready
      // timeout bounds the wait (and a rollback after it finds the instance known by then).
      if (state === 'notFound' && launched.nodeName === undefined) return { state: 'pending', instanceId };
      if (GONE_STATES.has(state)) return { state: 'failed', why: `the instance ${instanceId} is ${state === 'notFound' ? 'unknown to EC2' : state}` };
      return { state: 'pending', instanceId };
    },

    async remove(launched: LaunchedReplacement, node: Node | undefined): Promise<void> {
      // Only an instance carrying our managed tag: a replacement we launched.
      await instances.terminate(launched.ref, { requireOurTag: true });
      if (node !== undefined) await nodes.deleteNode(node.name, node.uid === undefined ? {} : { uid: node.uid });
    },

    async prepareRetire(node: Node): Promise<{ readonly handle?: string } | { readonly refused: string }> {
      if (node.instanceId === undefined) return { refused: `node ${node.name} has no EC2 providerID, so its instance cannot be terminated` };
      return {};
    },

    async retire(node: OldNode): Promise<boolean> {
      if (node.instanceId === undefined) throw new Error(`no EC2 instance id is known for node ${node.name}`);
      const result = await instances.terminate(node.instanceId, { requireOurTag: false });
      // The instance first: a Node object deleted while its kubelet still runs registers again.
      await nodes.deleteNode(node.name, node.uid === undefined ? {} : { uid: node.uid });
      return result === 'terminating';
    },

    async afterRetire(node: OldNode): Promise<void> {
      // A kubelet shutting down may register again, under a new uid: only a node of that instance is deleted.
      const lookup = await nodes.getNode(node.name);
      if (!lookup.exists || lookup.node.instanceId !== node.instanceId) return;
      await nodes.deleteNode(node.name, lookup.node.uid === undefined ? {} : { uid: lookup.node.uid });
    },
  };
}
