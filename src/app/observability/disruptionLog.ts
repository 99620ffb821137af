// The log line an operator greps for when a node goes away: Karpenter's `disrupting node(s)`, with the
// fields its disruption controller writes (command-id, reason, decision, counts, disrupted-nodes and
// replacement-nodes), so queries written for Karpenter's logs (e.g. CloudWatch Logs Insights
// `filter message = "disrupting node(s)"`) find ours too. Written when a command starts, not when a
// decision is planned: a dry run plans, it never disrupts.
import type { Node } from '../../core/model/types.ts';
import type { Decision } from '../../core/plan.ts';

/** Karpenter lists five instance types, then how many others. */
const LISTED_TYPES = 5;

function instanceTypeList(types: readonly string[]): string {
  const listed = types.slice(0, LISTED_TYPES).join(', ');
  return types.length > LISTED_TYPES ? `${listed} and ${types.length - LISTED_TYPES} other(s)` : listed;
}

export const DISRUPTING_MESSAGE = 'disrupting node(s)';

/** The fields of the `disrupting node(s)` line for a command that starts `decision`. */
export function disruptingNodesFields(commandId: string, decision: Decision, nodes: readonly (Node | undefined)[]): Record<string, unknown> {
  return {
    'command-id': commandId,
    reason: decision.reason.toLowerCase(),
    decision: decision.action,
    'disrupted-node-count': decision.nodes.length,
    'replacement-node-count': decision.replacements.length,
    'pod-count': decision.evictedPods.length,
    'disrupted-nodes': decision.nodes.map((name, i) => ({
      Node: { name },
      ...(nodes[i]?.instanceType === undefined ? {} : { 'instance-type': nodes[i]!.instanceType }),
      ...(nodes[i]?.capacityType === undefined ? {} : { 'capacity-type': nodes[i]!.capacityType }),
    })),
    'replacement-nodes': decision.replacements.map((r) => ({
      'capacity-type': r.capacityType,
      // As Karpenter: the type list only when there is a single replacement.
      ...(decision.replacements.length === 1 ? { 'instance-types': instanceTypeList(r.instanceTypes) } : {}),
    })),
  };
}
