// MAX_NODES_PER_COMMAND: one decision disrupts at most that many nodes (default 100, the cap Karpenter's
// multi-node consolidation puts on its candidates). The multi-node search and the m-to-n repack try no
// longer prefix; emptiness splits its deletions; a decision the cap cut says so.
import { describe, expect, it } from 'vitest';
import { capSentence, DEFAULT_MAX_NODES_PER_COMMAND, parseMaxNodesPerCommand } from '../../src/core/disruption/commandCap.ts';
import { projectLaterWaves } from '../../src/core/disruption/laterWaves.ts';
import { runConsolidationPass, type PassInput } from '../../src/core/disruption/pass.ts';
import { InputError } from '../../src/core/errors.ts';
import { goDurationOrNull as durationOrNull } from '../../src/core/input/duration.ts';
import type { Catalog, Cluster, NodePool } from '../../src/core/model/types.ts';
import type { Decision } from '../../src/core/plan.ts';
import { cluster, Gi, instanceType, m5Catalog, Mi, node, nodePool, on, pod, T0 } from '../builders.ts';

const pad = (i: number) => String(i).padStart(3, '0');

function input(c: Cluster, extra: Partial<PassInput> = {}, pools: NodePool[] = [nodePool()]): PassInput {
  return { cluster: c, nodePools: pools, catalog: m5Catalog(), nowMs: T0, gates: { spotToSpotConsolidation: false }, parseDuration: durationOrNull, ...extra };
}

/** `count` m5.large nodes, each running one small pod: most of them can go, their pods fitting on the rest. */
function lightCluster(count: number): Cluster {
  const nodes = Array.from({ length: count }, (_, i) => node({ name: `n${pad(i)}` }));
  const pods = nodes.flatMap((n) => on(n.name, pod({ requests: { cpu: 100, memory: 128 * Mi } })));
  return cluster({ nodes, pods });
}

/** `count` empty m5.large nodes next to one busy node. */
function emptyCluster(count: number): Cluster {
  const nodes = [node({ name: 'busy' }), ...Array.from({ length: count }, (_, i) => node({ name: `e${pad(i)}` }))];
  return cluster({ nodes, pods: on('busy', pod({ requests: { cpu: 1000, memory: Gi } })) });
}

const sizes = (decisions: readonly Decision[]) => decisions.map((d) => d.nodes.length);
const disruptedTwice = (decisions: readonly Decision[]) => {
  const all = decisions.flatMap((d) => d.nodes);
  return all.length - new Set(all).size;
};

describe('MAX_NODES_PER_COMMAND', () => {
  it('a 300-node cluster at a 100% budget: no decision takes more than 100 nodes, and a cut one says so', () => {
    const out = runConsolidationPass(input(lightCluster(300)));
    expect(out.decisions.length).toBeGreaterThan(1);
    expect(Math.max(...sizes(out.decisions))).toBe(DEFAULT_MAX_NODES_PER_COMMAND);
    expect(disruptedTwice(out.decisions)).toBe(0);
    const [first] = out.decisions;
    // Without the cap the search would have taken far more than 100 of the 300 nodes in one move.
    expect(first!.cappedAt).toEqual({ maxNodes: 100, eligible: 300 });
    expect(first!.summary).toContain('cut to 100 of 300 eligible nodes by MAX_NODES_PER_COMMAND');
    // A decision the cap did not cut carries no mark.
    for (const d of out.decisions) if (d.nodes.length < 100) expect(d).not.toHaveProperty('cappedAt');
  });

  it('without the setting, the default of 100 applies (the same plan as MAX_NODES_PER_COMMAND=100)', () => {
    const c = lightCluster(130);
    const byDefault = runConsolidationPass(input(c, { methods: ['multi-node'] }));
    const explicit = runConsolidationPass(input(c, { methods: ['multi-node'], maxNodesPerCommand: 100 }));
    expect(byDefault.decisions).toEqual(explicit.decisions);
    expect(byDefault.decisions[0]!.cappedAt).toEqual({ maxNodes: 100, eligible: 130 });
  });

  it('a cap of 3 on a small cluster: every method keeps to it', () => {
    const c = lightCluster(8);
    const uncapped = runConsolidationPass(input(c));
    expect(Math.max(...sizes(uncapped.decisions))).toBeGreaterThan(3); // the cap is what cuts them below
    const out = runConsolidationPass(input(c, { maxNodesPerCommand: 3 }));
    expect(out.decisions.length).toBeGreaterThan(1);
    expect(Math.max(...sizes(out.decisions))).toBe(3);
    expect(disruptedTwice(out.decisions)).toBe(0);
    expect(out.decisions[0]).toMatchObject({ method: 'multi-node', cappedAt: { maxNodes: 3, eligible: 8 } });
  });

  it('a cap of 1 leaves no merge: nodes go one by one', () => {
    const out = runConsolidationPass(input(lightCluster(4), { maxNodesPerCommand: 1 }));
    expect(out.decisions.length).toBeGreaterThan(0);
    expect(out.decisions.every((d) => d.nodes.length === 1 && d.method === 'single-node')).toBe(true);
  });

  it('a cluster smaller than the cap plans exactly as before, with no mark', () => {
    const c = lightCluster(12);
    const capped = runConsolidationPass(input(c));
    const huge = runConsolidationPass(input(c, { maxNodesPerCommand: 10_000 }));
    expect(capped.decisions).toEqual(huge.decisions);
    expect(capped.decisions.some((d) => d.cappedAt !== undefined)).toBe(false);
  });

  it('the m-to-n repack tries no merge longer than the cap', () => {
    // Three `small` nodes, two 1200m pods each: only three into two new ones pays (repack.test.ts).
    const catalog: Catalog = {
      region: 'us-east-1',
      instanceTypes: [instanceType('small', { cpu: 3900, memory: 15 * Gi, pods: 58 }, 0.2), instanceType('big', { cpu: 7900, memory: 31 * Gi, pods: 110 }, 0.5)],
    };
    const small = (name: string) => node({ name, instanceType: 'small', allocatable: { cpu: 3900, memory: 15 * Gi, pods: 58 }, capacity: { cpu: 4000, memory: 16 * Gi, pods: 58 } });
    const nodes = ['a', 'b', 'c'].map(small);
    const c = cluster({ nodes, pods: nodes.flatMap((n) => on(n.name, pod({ requests: { cpu: 1200, memory: Gi } }), pod({ requests: { cpu: 1200, memory: Gi } }))) });
    const pools = [nodePool({ requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['small'] }, { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }] })];
    const repack = (maxNodesPerCommand: number) => runConsolidationPass({ ...input(c, { methods: ['m-to-n'], maxNodesPerCommand }), catalog, nodePools: pools }).decisions;
    const three = repack(3);
    expect(three).toHaveLength(1);
    expect(three[0]).toMatchObject({ move: 'm-to-n', action: 'replace' });
    expect(three[0]!.nodes).toHaveLength(3);
    expect(three[0]!.replacements).toHaveLength(2);
    expect(three[0]).not.toHaveProperty('cappedAt'); // three of three: nothing cut
    expect(repack(2)).toEqual([]);
  });

  describe('emptiness is split into decisions of at most the cap, in order, within the budgets', () => {
    it('250 empty nodes, cap 100: 100 + 100 + 50', () => {
      const out = runConsolidationPass(input(emptyCluster(250), { methods: ['emptiness'] }));
      expect(out.decisions.map((d) => [d.method, d.nodes.length, d.cappedAt])).toEqual([
        ['emptiness', 100, { maxNodes: 100, eligible: 250 }],
        ['emptiness', 100, { maxNodes: 100, eligible: 150 }],
        ['emptiness', 50, undefined],
      ]);
      // In the order of the candidates, each node once.
      expect(out.decisions.flatMap((d) => d.nodes)).toEqual(Array.from({ length: 250 }, (_, i) => `e${pad(i)}`));
      expect(out.decisions[0]!.summary).toMatch(/; cut to 100 of 250 eligible nodes by MAX_NODES_PER_COMMAND$/);
    });

    it('the budget still bounds the total: 60% of 251 nodes is 151 nodes, in 100 + 51', () => {
      const out = runConsolidationPass(input(emptyCluster(250), { methods: ['emptiness'] }, [nodePool({ budgets: [{ nodes: { percent: 60 } }] })]));
      expect(out.decisions.map((d) => [d.nodes.length, d.cappedAt])).toEqual([
        [100, { maxNodes: 100, eligible: 151 }],
        [51, undefined],
      ]);
      const left = out.notes.get('e151') ?? [];
      expect(left.join(' ')).toMatch(/disruption budget of NodePool "default"/);
    });

    it('up to the cap: one decision as before', () => {
      const out = runConsolidationPass(input(emptyCluster(5), { methods: ['emptiness'] }));
      expect(out.decisions).toHaveLength(1);
      expect(out.decisions[0]).not.toHaveProperty('cappedAt');
    });
  });

  it('the later waves keep to the same cap', () => {
    // A budget of 4 nodes leaves most of the work to later waves; each wave's moves take 4 nodes at most
    // without the cap, 2 with it.
    const pools = [nodePool({ budgets: [{ nodes: { count: 4 } }] })];
    const waves = (maxNodesPerCommand: number) => {
      const pass = input(lightCluster(12), { maxNodesPerCommand }, pools);
      const first = runConsolidationPass(pass);
      const projection = projectLaterWaves(pass, first, { waves: 5 });
      return { first: first.decisions, later: projection.waves.flatMap((w) => w.decisions) };
    };
    expect(Math.max(...sizes(waves(100).later))).toBe(4);
    const capped = waves(2);
    expect(capped.later.length).toBeGreaterThan(0);
    expect(Math.max(...sizes([...capped.first, ...capped.later]))).toBe(2);
  });

  it('a bad number is a programming error in the core (the entry points check the setting)', () => {
    expect(() => runConsolidationPass(input(lightCluster(2), { maxNodesPerCommand: 0 }))).toThrow(RangeError);
  });
});

describe('parseMaxNodesPerCommand', () => {
  it.each([
    ['unset: the default', undefined, 100],
    ['empty: the default', ' ', 100],
    ['a positive whole number', '250', 250],
    ['one node per command', '1', 1],
  ] as const)('%s', (_name, text, expected) => {
    expect(parseMaxNodesPerCommand(text)).toBe(expected);
  });

  it.each([['0'], ['-5'], ['2.5'], ['ten'], ['1e3']])('refuses %s, naming the source', (text) => {
    expect(() => parseMaxNodesPerCommand(text, '--max-nodes-per-command')).toThrow(InputError);
    expect(() => parseMaxNodesPerCommand(text, '--max-nodes-per-command')).toThrow(/^--max-nodes-per-command: ".*" is not a positive whole number of nodes/);
  });

  it('words a cut decision for a person', () => {
    expect(capSentence({ maxNodes: 100, eligible: 300 })).toBe('cut to 100 of 300 eligible nodes by MAX_NODES_PER_COMMAND');
  });
});
