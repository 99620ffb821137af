// Replays a recorded cluster at another moment: every timestamp moves by the same amount, so ages,
// consolidateAfter windows and expireAfter lifetimes look as they did when it was recorded. The
// embedded demo uses it so that `npm start` plans the same on any day.
import type { Cluster, Node, Pod } from './types.ts';

const shift = (ms: number | undefined, deltaMs: number) => (ms === undefined ? undefined : ms + deltaMs);

export function shiftClusterTimes(cluster: Cluster, deltaMs: number): Cluster {
  if (deltaMs === 0) return cluster;
  const nodes: Node[] = cluster.nodes.map((n) => ({ ...n, createdAt: n.createdAt + deltaMs, readySince: shift(n.readySince, deltaMs) }));
  const pods: Pod[] = cluster.pods.map((p) => ({ ...p, createdAt: shift(p.createdAt, deltaMs), startedAt: shift(p.startedAt, deltaMs) }));
  return { ...cluster, nodes, pods };
}
