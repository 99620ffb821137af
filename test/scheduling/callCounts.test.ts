// The incremental domain counts of a simulation (callCounts.ts) against a plain recount
// (topology.ts domainDelta) after every placement, on random clusters, random excluded nodes, random
// moves and random placements on existing and new nodes, including new nodes whose zone narrows after
// pods have landed on them. Counters are created at random moments, so trackers that catch up with
// pods placed before them are covered too.
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/core/random.ts';
import type { LabelSelector, Node, Pod, PodAffinityTerm } from '../../src/core/model/types.ts';
import { buildAttempt } from '../../src/core/scheduling/attempt.ts';
import { CallState } from '../../src/core/scheduling/callState.ts';
import { buildCpuOrder, buildExistingNodes } from '../../src/core/scheduling/existingNodes.ts';
import type { NewNode } from '../../src/core/scheduling/newNode.ts';
import { Namespaces, PodIndex, type MatchSet } from '../../src/core/scheduling/podIndex.ts';
import type { PreparedPod } from '../../src/core/scheduling/podConstraints.ts';
import {
  antiGroupSource,
  buildAntiGroups,
  buildSpreadBase,
  countIn,
  domainDelta,
  matchSetSource,
  type DomainDelta,
  type NewNodeDomains,
  type SpreadBase,
  type SpreadInfo,
  type TermInfo,
} from '../../src/core/scheduling/topology.ts';
import { cluster, node, pod } from '../builders.ts';
import { HOSTNAME, ZONE } from './helpers.ts';

const RACK = 'example.com/rack';
const KEYS = [ZONE, HOSTNAME, RACK] as const;
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
const APPS = ['a', 'b', 'c', 'd'];

/** Nonzero entries, sorted, and the undetermined count: what every reader of a delta can observe. */
function observable(delta: DomainDelta): { entries: [string, number][]; undetermined: number } {
  const entries = [...delta.byDomain.entries()].filter(([, count]) => count !== 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { entries, undetermined: delta.undetermined };
}

/** A new node whose domains the test narrows by hand, as committing pods would. */
class FakeNewNode implements NewNodeDomains {
  constructor(
    readonly hostname: string,
    public zones: string[],
  ) {}
  domainValues(key: string): readonly string[] | undefined {
    if (key === HOSTNAME) return [this.hostname];
    if (key === ZONE) return this.zones;
    return undefined; // rack: open-ended
  }
}

function scenario(seed: number) {
  const rand = mulberry32(seed);
  const pick = <T,>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  const labelsOf = (): Record<string, string> => ({ app: pick(APPS), ...(rand() < 0.5 ? { tier: pick(['x', 'y']) } : {}) });
  const selectors: LabelSelector[] = [
    { matchLabels: { app: 'a' } },
    { matchLabels: { app: 'b', tier: 'x' } },
    { matchLabels: { tier: 'y' } },
    { matchExpressions: [{ key: 'app', operator: 'In', values: ['a', 'c'] }] },
    {},
  ];
  const antiTerm = (): PodAffinityTerm => ({ labelSelector: pick(selectors), namespaces: [], topologyKey: pick(KEYS) });

  const nodes: Node[] = [];
  for (let i = 0; i < 14; i++) {
    nodes.push(
      node({
        name: `n${i}`,
        zone: ZONES[i % 3]!,
        // Some nodes lack the rack label: they belong to no rack domain.
        labels: i % 4 === 3 ? {} : { [RACK]: `r${i % 2}` },
        deleting: i === 13,
      }),
    );
  }
  const pods: Pod[] = [];
  for (let i = 0; i < 90; i++) {
    pods.push(
      pod({
        name: `p${i}`,
        namespace: pick(['ns1', 'ns2']),
        labels: labelsOf(),
        nodeName: pick(nodes).name,
        podAntiAffinity: rand() < 0.2 ? [antiTerm()] : [],
      }),
    );
  }
  const c = cluster({ nodes, pods });
  const existing = buildExistingNodes(c);
  const nodeIndexByName = new Map(existing.map((n) => [n.name, n.index] as const));
  const counted: Pod[] = [];
  const countedNodes: number[] = [];
  const boundNodeByUid = new Map<string, number>();
  for (const p of pods) {
    const nodeIndex = nodeIndexByName.get(p.nodeName!)!;
    boundNodeByUid.set(p.uid, nodeIndex);
    if (existing[nodeIndex]!.alive) {
      counted.push(p);
      countedNodes.push(nodeIndex);
    }
  }
  const index = new PodIndex(counted, Int32Array.from(countedNodes), existing.map((n) => n.labels));
  const namespaces = new Namespaces([]);
  const groups = buildAntiGroups(index, namespaces);

  const excluded = new Set(nodes.filter(() => rand() < 0.3).map((n) => n.name));
  // Pods to move: those of excluded nodes, and a few from nodes that stay (they count as removed).
  const moving = pods.filter((p) => excluded.has(p.nodeName!) || rand() < 0.08);
  const state = new CallState(existing, nodeIndexByName, { nodeIndexOf: (p) => boundNodeByUid.get(p.uid) }, index, excluded, moving, buildCpuOrder(existing));

  const matchSets: MatchSet[] = selectors.flatMap((selector) => [
    index.matchSet(selector, namespaces.ofTerm({ labelSelector: selector, namespaces: [], topologyKey: ZONE }, 'ns1')),
    index.matchSet(selector, namespaces.ofTerm({ labelSelector: selector, namespaces: ['ns1', 'ns2'], topologyKey: ZONE }, 'ns1')),
  ]);
  const spreadBases: { matchSet: MatchSet; key: string; base: SpreadBase }[] = [];
  for (const matchSet of matchSets.slice(0, 4)) {
    for (const key of KEYS) {
      const skip = Math.floor(rand() * 5);
      spreadBases.push({ matchSet, key, base: buildSpreadBase(existing, matchSet, key, (n) => n.index % 5 !== skip) });
    }
  }
  return { rand, pick, labelsOf, antiTerm, existing, index, namespaces, groups, excluded, state, matchSets, spreadBases };
}

const preparedOf = (p: Pod, antiAffinity: readonly TermInfo[], spread: readonly SpreadInfo[] = []): PreparedPod =>
  ({ pod: p, cpu: 0, memory: 0, other: [], ports: [], affinity: [], antiAffinity, selfAffine: false, spread, repelledBy: [] }) as unknown as PreparedPod;

describe('incremental topology counts', () => {
  it.each(Array.from({ length: 12 }, (_, k) => ({ name: `random simulation ${k + 1}`, seed: 1000 + k })))(
    '$name: every count equals a recount after every placement',
    ({ seed }) => {
      const s = scenario(seed);
      const { rand, pick, state } = s;
      const newNodes = [new FakeNewNode('new-0', [...ZONES]), new FakeNewNode('new-1', ['us-east-1a', 'us-east-1b'])];
      const receivers = s.existing.filter((n) => n.alive && !s.excluded.has(n.name));
      const combos = s.matchSets.flatMap((matchSet) =>
        KEYS.flatMap((key) => (['count', 'block'] as const).map((mode) => ({ matchSet, key, mode }))),
      );
      let compared = 0;
      const check = (): void => {
        // A random subset each time: trackers are created at different moments of the simulation.
        for (const { matchSet, key, mode } of combos) {
          if (rand() < 0.5) continue;
          expect(observable(state.counts.delta(matchSet, key, mode))).toEqual(observable(domainDelta(state, key, matchSetSource(matchSet), mode)));
          compared++;
        }
        for (const { matchSet, key, base } of s.spreadBases) {
          if (rand() < 0.5) continue;
          expect(observable(state.counts.delta(matchSet, key, 'count', base.eligible))).toEqual(
            observable(domainDelta(state, key, matchSetSource(matchSet), 'count', base.eligible)),
          );
          compared++;
        }
        for (const group of s.groups) {
          expect(observable(state.counts.groupDelta(group))).toEqual(observable(domainDelta(state, group.key, antiGroupSource(group), 'block')));
        }
        const probe = pod({ namespace: pick(['ns1', 'ns2']), labels: s.labelsOf() });
        const expected: { pod: string; key: string }[] = [];
        for (const placed of state.placed) {
          for (const t of placed.antiTerms) if (t.matchSet.matches(probe.namespace, probe.labels)) expected.push({ pod: placed.pod.name, key: t.key });
        }
        expect(state.counts.repellingTerms(probe.namespace, probe.labels).map((r) => ({ pod: r.placed.pod.name, key: r.key }))).toEqual(expected);
      };

      check();
      for (let step = 0; step < 70; step++) {
        const p = pod({ name: `placed-${step}`, namespace: pick(['ns1', 'ns2']), labels: s.labelsOf() });
        const antiTerms: TermInfo[] = [];
        if (rand() < 0.3) {
          const term = s.antiTerm();
          antiTerms.push({ term, key: term.topologyKey, matchSet: s.index.matchSet(term.labelSelector, s.namespaces.ofTerm(term, p.namespace)) });
        }
        if (rand() < 0.7) {
          const target = pick(receivers);
          state.placeOnExisting(preparedOf(p, antiTerms), target.index, target.labels);
        } else {
          state.placeOnNew(preparedOf(p, antiTerms), pick(newNodes) as unknown as NewNode);
        }
        // A new node's zone narrows after pods landed there: they then count in that zone.
        if (rand() < 0.1) {
          const n = pick(newNodes);
          if (n.zones.length > 1) n.zones = n.zones.slice(0, n.zones.length - 1);
        }
        check();
      }
      expect(compared).toBeGreaterThan(1000);
    },
  );

  it.each(Array.from({ length: 6 }, (_, k) => ({ name: `random simulation ${k + 1}`, seed: 2000 + k })))(
    '$name: spread domains and their minimum equal a recount',
    ({ seed }) => {
      const s = scenario(seed);
      const { rand, pick, state } = s;
      const newNodes = [new FakeNewNode('new-0', [...ZONES]), new FakeNewNode('new-1', ['us-east-1b'])];
      const receivers = s.existing.filter((n) => n.alive && !s.excluded.has(n.name));
      const poolDomains = (key: string): string[] => (key === ZONE ? ['us-east-1c', 'us-east-1d'] : key === RACK ? ['r9'] : []);
      for (let step = 0; step < 40; step++) {
        for (const { matchSet, key, base } of s.spreadBases) {
          const info = { key, matchSet, maxSkew: 1, minDomains: 1, selfMatch: true, base: () => base, poolDomains: () => poolDomains(key) } as unknown as SpreadInfo;
          const domainPools = rand() < 0.5 ? ['pool'] : [];
          const attempt = buildAttempt(preparedOf(pod({ labels: { app: 'z' } }), [], [info]), {
            view: state,
            counts: state.counts,
            newNodes: newNodes as unknown as NewNode[],
            domainPools,
          })!;
          const view = attempt.spread[0]!;
          // The recount, as the simulation did it before counts were incremental.
          const lost = new Map<string, number>();
          for (const i of state.excludedAlive) if (base.eligible[i]) lost.set(state.nodeLabel(i, key)!, (lost.get(state.nodeLabel(i, key)!) ?? 0) + 1);
          const domains = new Set<string>();
          for (const [domain, n] of base.domainNodes) if (n - (lost.get(domain) ?? 0) > 0) domains.add(domain);
          for (const _ of domainPools) for (const d of poolDomains(key)) domains.add(d);
          for (const n of newNodes) {
            const values = n.domainValues(key);
            if (values && values.length === 1) domains.add(values[0]!);
          }
          const recount = domainDelta(state, key, matchSetSource(matchSet), 'count', base.eligible);
          let min = Number.POSITIVE_INFINITY;
          for (const d of domains) min = Math.min(min, countIn(base.domainMatches, recount, d));
          expect([...view.domains].sort()).toEqual([...domains].sort());
          expect(view.domains.size).toBe(domains.size);
          expect(view.rawMin).toBe(min);
        }
        const p = pod({ name: `placed-${step}`, namespace: pick(['ns1', 'ns2']), labels: s.labelsOf() });
        if (rand() < 0.75) {
          const target = pick(receivers);
          state.placeOnExisting(preparedOf(p, []), target.index, target.labels);
        } else {
          state.placeOnNew(preparedOf(p, []), pick(newNodes) as unknown as NewNode);
        }
      }
    },
  );
});
