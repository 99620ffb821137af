// MAX_NODES_PER_COMMAND: the most nodes one decision disrupts. A command that goes wrong (a replacement
// that never becomes Ready, pods that do not come back, a NodeClaim Karpenter refuses) then touches a
// bounded part of the cluster, however open the budgets are. The default is Karpenter's own cap: its
// multi-node consolidation considers at most 100 candidates per command (MultiNodeConsolidation caps
// its batch at 100), so no command of this product is larger than one of Karpenter's.
import { InputError } from '../errors.ts';
import type { DecisionCap } from '../plan.ts';

export const DEFAULT_MAX_NODES_PER_COMMAND = 100;

/** `MAX_NODES_PER_COMMAND` / `--max-nodes-per-command`: unset is the default; otherwise a positive integer. */
export function parseMaxNodesPerCommand(text: string | undefined, source = 'MAX_NODES_PER_COMMAND'): number {
  const value = text?.trim() ?? '';
  if (value === '') return DEFAULT_MAX_NODES_PER_COMMAND;
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new InputError('', source, `"${text}" is not a positive whole number of nodes (default ${DEFAULT_MAX_NODES_PER_COMMAND})`);
  return n;
}

/** How a cut decision says so: `cut to 100 of 300 eligible nodes by MAX_NODES_PER_COMMAND`. */
export function capSentence(cap: DecisionCap): string {
  return `cut to ${cap.maxNodes} of ${cap.eligible} eligible nodes by MAX_NODES_PER_COMMAND`;
}
