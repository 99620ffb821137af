// Daemonset overhead of a node not launched yet: every DaemonSet whose pod template would land on it
// (tolerates its taints, node selector / required affinity compatible with what the node will carry)
// takes its requests, one pod slot and its host ports there before any workload pod does.
import type { DaemonSet, Taint } from '../model/types.ts';
import { normalizeHostPorts, type PortUse } from './hostPorts.ts';
import { alternativeSets, nodeConstraintAlternatives, setCompatible } from './nodeAffinity.ts';
import type { KeyRequirement, RequirementSet } from './requirements.ts';
import { PODS } from './resources.ts';
import { firstUntoleratedTaint } from './taints.ts';

export interface PreparedDaemonSet {
  readonly daemonSet: DaemonSet;
  readonly alternatives: readonly RequirementSet[];
  readonly ports: readonly PortUse[];
}

export interface DaemonSetOverhead {
  readonly requests: Readonly<Record<string, number>>;
  readonly pods: number;
  readonly ports: readonly PortUse[];
}

export function prepareDaemonSets(daemonSets: readonly DaemonSet[]): PreparedDaemonSet[] {
  return daemonSets.map((daemonSet) => ({
    daemonSet,
    alternatives: alternativeSets(nodeConstraintAlternatives(daemonSet.template)),
    ports: normalizeHostPorts(daemonSet.template.hostPorts),
  }));
}

export function daemonSetRunsOn(
  prepared: PreparedDaemonSet,
  taints: readonly Taint[],
  keyAt: (key: string) => KeyRequirement,
): boolean {
  if (firstUntoleratedTaint(prepared.daemonSet.template.tolerations, taints) !== undefined) return false;
  return prepared.alternatives.some((alternative) => setCompatible(alternative, keyAt));
}

/** The summed requests, pod slots and host ports of the daemonsets that would run on the node. */
export function daemonSetOverhead(
  daemonSets: readonly PreparedDaemonSet[],
  taints: readonly Taint[],
  keyAt: (key: string) => KeyRequirement,
): DaemonSetOverhead {
  const requests: Record<string, number> = {};
  const ports: PortUse[] = [];
  let pods = 0;
  for (const prepared of daemonSets) {
    if (!daemonSetRunsOn(prepared, taints, keyAt)) continue;
    pods += 1;
    for (const [key, value] of Object.entries(prepared.daemonSet.template.requests)) {
      if (key !== PODS) requests[key] = (requests[key] ?? 0) + value;
    }
    ports.push(...prepared.ports);
  }
  return { requests, pods, ports };
}

