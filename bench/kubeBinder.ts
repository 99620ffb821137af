// A second model of kube-scheduler for the quality benchmark, written apart from the project's simulator so
// that a plan is also carried out by a scheduler the checks were not written against
// (QUALITY_SCHED=int). kube-scheduler's NodeResourcesFit with the LeastAllocated strategy scores a node
// per resource as (allocatable - requested) * 100 / allocatable in integer arithmetic, takes the weighted
// mean (cpu and memory, weight 1 each, integer division), and picks among the nodes with the top score at
// random (selectHost). The project's own model scores with the exact shares and breaks ties by name.
// Resources only: the benchmark's pods have no selectors, affinity or spread, and its nodes no taints.
import type { Cluster, Pod } from '../src/core/model/types.ts';

interface Room {
  readonly name: string;
  readonly cpu: number;
  readonly memory: number;
  readonly pods: number;
  usedCpu: number;
  usedMemory: number;
  usedPods: number;
}

const score = (room: Room, cpu: number, memory: number): number => {
  const cpuScore = Math.floor(((room.cpu - room.usedCpu - cpu) * 100) / room.cpu);
  const memoryScore = Math.floor(((room.memory - room.usedMemory - memory) * 100) / room.memory);
  return Math.floor((cpuScore + memoryScore) / 2);
};

/**
 * Binds `queue` one pod at a time, in order, onto the nodes of `cluster` that are not `excluded` (a node
 * named in `availableFrom` takes pods from that queue position on). Returns where each bound pod went;
 * the others stay Pending.
 */
export function bindWithIntegerScores(
  cluster: Cluster,
  queue: readonly Pod[],
  excluded: ReadonlySet<string>,
  availableFrom: ReadonlyMap<string, number>,
  rand: () => number,
): { placed: Map<string, string>; pending: Pod[] } {
  const rooms = new Map<string, Room>();
  for (const node of cluster.nodes) {
    if (excluded.has(node.name)) continue;
    rooms.set(node.name, {
      name: node.name,
      cpu: node.allocatable['cpu'] ?? 0,
      memory: node.allocatable['memory'] ?? 0,
      pods: node.allocatable['pods'] ?? 110,
      usedCpu: 0,
      usedMemory: 0,
      usedPods: 0,
    });
  }
  const queued = new Set(queue.map((p) => p.uid));
  for (const pod of cluster.pods) {
    if (pod.nodeName === undefined || queued.has(pod.uid)) continue;
    const room = rooms.get(pod.nodeName);
    if (!room) continue;
    room.usedCpu += pod.requests['cpu'] ?? 0;
    room.usedMemory += pod.requests['memory'] ?? 0;
    room.usedPods += 1;
  }
  const placed = new Map<string, string>();
  const pending: Pod[] = [];
  for (const [position, pod] of queue.entries()) {
    const cpu = pod.requests['cpu'] ?? 0;
    const memory = pod.requests['memory'] ?? 0;
    let best: Room | undefined;
    let bestScore = Number.NEGATIVE_INFINITY;
    let ties = 0;
    for (const room of rooms.values()) {
      if ((availableFrom.get(room.name) ?? 0) > position) continue;
      if (room.usedCpu + cpu > room.cpu || room.usedMemory + memory > room.memory || room.usedPods + 1 > room.pods) continue;
      const s = score(room, cpu, memory);
      if (s > bestScore) {
        best = room;
        bestScore = s;
        ties = 1;
      } else if (s === bestScore) {
        // Reservoir sampling over the nodes with the top score, as selectHost does.
        ties += 1;
        if (rand() * ties < 1) best = room;
      }
    }
    if (!best) {
      pending.push(pod);
      continue;
    }
    best.usedCpu += cpu;
    best.usedMemory += memory;
    best.usedPods += 1;
    placed.set(pod.uid, best.name);
  }
  return { placed, pending };
}
