// Why a pod could not go to a node: checks run in a fixed order (cheap first), each failure has a
// stage, and the stage reached tells how close a node came to taking the pod. The sentence given
// for an unschedulable pod explains the node that came closest.
import { LabelKeys } from '../model/types.ts';

export const Stage = {
  Ok: 0,
  Resources: 1,
  Taint: 2,
  NodeAffinity: 3,
  VolumeZone: 4,
  HostPort: 5,
  Limits: 6,
  AntiAffinityOfOthers: 7,
  PodAntiAffinity: 8,
  PodAffinity: 9,
  TopologySpread: 10,
  // Last: a node that passes every other check but may not take the pod (it would otherwise be the one
  // that came closest, and its sentence says why it was refused).
  ConsolidateAfter: 11,
  // A node that passes every check but is not Ready yet when the pod is bound (a replacement still
  // launching, SimulationRequest.availableFrom): only kube-scheduler's placement model has such nodes.
  NotReadyYet: 12,
} as const;
export type Stage = (typeof Stage)[keyof typeof Stage];

/** `zone us-east-1a`, `node ip-10-0-1-7`, or `key=value` for other topology keys. */
export function describeDomain(key: string, value: string): string {
  if (key === LabelKeys.zone) return `zone ${value}`;
  if (key === LabelKeys.hostname) return value.startsWith('new:') ? `new node ${value.slice(4)}` : `node ${value}`;
  if (key === LabelKeys.capacityType) return `capacity type ${value}`;
  return `${key}=${value}`;
}

export function describeTopologyKey(key: string): string {
  if (key === LabelKeys.zone) return 'zone';
  if (key === LabelKeys.hostname) return 'hostname';
  return key;
}

/** Why a pod pinned to hosts by its volumes fits on no other node (Pod.volumeHosts). */
export function volumeHostsSentence(hosts: Iterable<string>): string {
  return `its persistent volume is bound to node ${[...hosts].join(', ')} (not a local or hostPath volume), so it can run nowhere else`;
}

export const podName = (pod: { readonly namespace: string; readonly name: string }): string => `${pod.namespace}/${pod.name}`;
