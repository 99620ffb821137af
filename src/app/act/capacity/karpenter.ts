// The `karpenter` actuator's side of a command. A replacement is a NodeClaim built from its NodePool
// (adapters/kubernetes/nodeClaimTemplate.ts), so Karpenter launches it, and later handles its spot
// interruptions, drift, expiry and repair like any node of the pool. It is ready once Karpenter marks
// it Initialized (launched, registered, start-up taints gone, resources registered) and its Node is
// Ready.
//
// Old nodes: the command drains them itself, as the ec2 actuator does, then deletes their NodeClaims;
// Karpenter's termination finalizer finds them empty and terminates the instances. Deleting the
// NodeClaim first and letting the finalizer drain would hand the drain to Karpenter for good: once a
// NodeClaim is being deleted nothing can give the node back, so a PodDisruptionBudget that never
// allows an eviction (or a pod that fits nowhere) would leave it cordoned until a terminationGracePeriod
// forces it, or for ever. Draining ourselves keeps both actuators to one drain, with the same proof
// before the first eviction, the same drain timeout that gives the nodes back, and our own taint.
import type { Node } from '../../../core/model/types.ts';
import type { NodeClaimApi, NodeClaimView, NodeOperations } from '../../../core/ports/actuator.ts';
import type { LaunchedReplacement } from '../../../core/state/types.ts';
import type { Capacity, Launched, OldNode, ReplacementLaunch, ReplacementStatus } from './types.ts';
import { initialized } from './initialized.ts';

export function karpenterCapacity(claims: NodeClaimApi, nodes: NodeOperations): Capacity {
  const nodeOf = async (claim: NodeClaimView): Promise<Node | undefined> => {
    if (claim.nodeName === undefined) return undefined;
    const lookup = await nodes.getNode(claim.nodeName);
    // The name is only a hint: a Node of another instance under that name is not this claim's.
    if (!lookup.exists || (claim.instanceId !== undefined && lookup.node.instanceId !== undefined && lookup.node.instanceId !== claim.instanceId)) return undefined;
    return lookup.node;
  };

  return {
    kind: 'karpenter',

    async launch(request: ReplacementLaunch): Promise<Launched> {
      const { claim, reused } = await claims.create({
        commandId: request.commandId,
        index: request.index,
        nodePool: request.nodePool,
        replacement: request.replacement,
        requests: request.requests,
      });
      return { ref: claim.name, ...(claim.instanceId === undefined ? {} : { instanceId: claim.instanceId }), reused, description: `NodeClaim ${claim.name}` };
    },

    async find(commandId, index) {
      const found = (await claims.listOurs()).find((c) => c.commandId === commandId && (c.replacementIndex ?? 0) === index);
      return found === undefined ? undefined : { ref: found.name, ...(found.instanceId === undefined ? {} : { instanceId: found.instanceId }) };
    },

    async status(launched: LaunchedReplacement): Promise<ReplacementStatus> {
      const claim = await claims.get(launched.ref);
      if (claim === undefined) return { state: 'failed', why: `NodeClaim ${launched.ref} no longer exists (Karpenter or someone else deleted it)` };
      const node = await nodeOf(claim);
      const withNode = node === undefined ? {} : { node };
      const instance = claim.instanceId === undefined ? {} : { instanceId: claim.instanceId };
      if (claim.deleting) return { state: 'failed', why: `NodeClaim ${claim.name} is being deleted`, ...withNode };
      if (claim.launched?.status === 'False') {
        return { state: 'failed', why: `Karpenter could not launch NodeClaim ${claim.name}: ${conditionText(claim.launched)}`, ...withNode };
      }
      if (claim.initialized?.status === 'True' && node !== undefined && node.ready && initialized(node) && !node.deleting) {
        return { state: 'initialized', node, ...instance };
      }
      return { state: 'pending', ...withNode, ...instance };
    },

    async remove(launched: LaunchedReplacement): Promise<void> {
      // Karpenter's finalizer terminates the instance and removes the Node; its pods were moved first.
      await claims.delete(launched.ref);
    },

    async prepareRetire(node: Node): Promise<{ readonly handle?: string } | { readonly refused: string }> {
      const claim = await claims.findForNode({ name: node.name, ...(node.instanceId === undefined ? {} : { instanceId: node.instanceId }) });
      if (claim === undefined) return { refused: `node ${node.name} has no NodeClaim, and the karpenter actuator retires nodes only through Karpenter` };
      if (claim.deleting) return { refused: `the NodeClaim ${claim.name} of node ${node.name} is already being deleted` };
      return { handle: claim.name };
    },

    async retire(node: OldNode): Promise<boolean> {
      if (node.handle === undefined) throw new Error(`no NodeClaim is known for node ${node.name}`);
      return (await claims.delete(node.handle)) === 'deleted';
    },

    async afterRetire(): Promise<void> {
      // Karpenter's termination finalizer removes the Node and the instance.
    },
  };
}

function conditionText(condition: { readonly reason?: string; readonly message?: string }): string {
  return [condition.reason, condition.message].filter((t) => t !== undefined && t !== '').join(': ') || 'no reason given';
}
