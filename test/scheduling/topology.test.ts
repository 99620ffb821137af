// Pod affinity, anti-affinity and topology spread on existing nodes. Nodes: `a1` and `a2` in
// us-east-1a, `b1` in us-east-1b, `c1` in us-east-1c unless a case says otherwise.
import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/core/model/types.ts';
import { Gi, node, on, pod } from '../builders.ts';
import { destinationOf, destinations, HOSTNAME, labelled, reasons, simulateScenario, spread, term, ZONE, type Scenario } from './helpers.ts';

interface Case {
  readonly name: string;
  readonly scenario: Scenario;
  /** Acceptable destinations of the single moving pod ('-' = nowhere). */
  readonly expected: string | readonly string[];
  readonly reason?: RegExp;
}

function run(c: Case): void {
  const result = simulateScenario(c.scenario);
  const expected = typeof c.expected === 'string' ? [c.expected] : c.expected;
  expect(expected).toContain(destinationOf(result));
  if (c.reason) expect(reasons(result)[0]).toMatch(c.reason);
}

const big = { cpu: 8000, memory: 32 * Gi, pods: 110 };
const zonal = (name: string, zone: string, extra: Partial<Node> = {}): Node => node({ name, zone, allocatable: big, ...extra });
/** No room at all: the node stays a topology domain but cannot take the pod. */
const full = { cpu: 0, memory: 0, pods: 110 };
const onlyZoneAHasRoom = (): Node[] => [
  zonal('a1', 'us-east-1a'),
  zonal('a2', 'us-east-1a'),
  zonal('b1', 'us-east-1b', { allocatable: full }),
  zonal('c1', 'us-east-1c', { allocatable: full }),
];
const fourNodes = (): Node[] => [zonal('a1', 'us-east-1a'), zonal('a2', 'us-east-1a'), zonal('b1', 'us-east-1b'), zonal('c1', 'us-east-1c')];

describe('required pod affinity', () => {
  const mover = (extra: Partial<Pod> = {}): Pod => labelled('web', { app: 'web' }, { podAffinity: [term({ app: 'cache' }, ZONE)], ...extra });
  it.each<Case>([
    {
      name: 'a matching pod in the zone allows (only that zone)',
      scenario: { nodes: fourNodes(), pods: on('b1', labelled('cache-0', { app: 'cache' })), moving: [mover()] },
      expected: 'b1',
    },
    {
      name: 'no matching pod in any zone forbids',
      scenario: { nodes: fourNodes(), pods: on('b1', labelled('other', { app: 'db' })), moving: [mover()] },
      expected: '-',
      reason: /pod affinity/,
    },
    {
      name: 'a matching pod in a namespace the term does not cover forbids',
      scenario: { nodes: fourNodes(), pods: on('b1', labelled('cache-0', { app: 'cache' }, { namespace: 'other' })), moving: [mover()] },
      expected: '-',
    },
    {
      name: 'listed namespaces are looked at',
      scenario: {
        nodes: fourNodes(),
        pods: on('b1', labelled('cache-0', { app: 'cache' }, { namespace: 'other' })),
        moving: [mover({ podAffinity: [term({ app: 'cache' }, ZONE, { namespaces: ['other'] })] })],
      },
      expected: 'b1',
    },
    {
      name: 'a namespaceSelector selecting the namespace by label allows',
      scenario: {
        nodes: fourNodes(),
        namespaces: [{ name: 'other', labels: { team: 'infra' } }],
        pods: on('b1', labelled('cache-0', { app: 'cache' }, { namespace: 'other' })),
        moving: [mover({ podAffinity: [term({ app: 'cache' }, ZONE, { namespaceSelector: { matchLabels: { team: 'infra' } } })] })],
      },
      expected: 'b1',
    },
    {
      name: 'an empty namespaceSelector covers every namespace',
      scenario: {
        nodes: fourNodes(),
        pods: on('c1', labelled('cache-0', { app: 'cache' }, { namespace: 'elsewhere' })),
        moving: [mover({ podAffinity: [term({ app: 'cache' }, ZONE, { namespaceSelector: {} })] })],
      },
      expected: 'c1',
    },
    {
      name: 'a namespaceSelector not selecting the namespace forbids',
      scenario: {
        nodes: fourNodes(),
        namespaces: [{ name: 'other', labels: { team: 'data' } }],
        pods: on('b1', labelled('cache-0', { app: 'cache' }, { namespace: 'other' })),
        moving: [mover({ podAffinity: [term({ app: 'cache' }, ZONE, { namespaceSelector: { matchLabels: { team: 'infra' } } })] })],
      },
      expected: '-',
    },
    {
      name: 'the first pod of a self-affine group may go anywhere when nothing matches',
      scenario: { nodes: fourNodes(), moving: [labelled('web-0', { app: 'web' }, { podAffinity: [term({ app: 'web' }, ZONE)] })] },
      expected: ['a1', 'a2', 'b1', 'c1'],
    },
    {
      name: 'a self-affine pod must join its group once one exists',
      scenario: {
        nodes: fourNodes(),
        pods: on('c1', labelled('web-1', { app: 'web' })),
        moving: [labelled('web-0', { app: 'web' }, { podAffinity: [term({ app: 'web' }, ZONE)] })],
      },
      expected: 'c1',
    },
    {
      name: 'hostname affinity needs the very node of a matching pod',
      scenario: { nodes: fourNodes(), pods: on('a2', labelled('cache-0', { app: 'cache' })), moving: [mover({ podAffinity: [term({ app: 'cache' }, HOSTNAME)] })] },
      expected: 'a2',
    },
    {
      name: 'a term without label selector matches no pod (forbids)',
      scenario: { nodes: fourNodes(), pods: on('a2', labelled('cache-0', { app: 'cache' })), moving: [mover({ podAffinity: [term(undefined, ZONE)] })] },
      expected: '-',
    },
  ])('$name', run);
});

describe('required pod anti-affinity', () => {
  const mover = (key = HOSTNAME): Pod => labelled('web', { app: 'web' }, { podAntiAffinity: [term({ app: 'web' }, key)] });
  it.each<Case>([
    {
      name: 'hostname anti-affinity: a node without matching pods allows',
      scenario: { nodes: [zonal('a1', 'us-east-1a'), zonal('a2', 'us-east-1a')], pods: on('a1', labelled('web-1', { app: 'web' })), moving: [mover()] },
      expected: 'a2',
    },
    {
      name: 'hostname anti-affinity: a matching pod on the only node forbids',
      scenario: { nodes: [zonal('a1', 'us-east-1a')], pods: on('a1', labelled('web-1', { app: 'web' })), moving: [mover()] },
      expected: '-',
      reason: /^anti-affinity with pod default\/web-1 in node a1$/,
    },
    {
      name: 'zone anti-affinity forbids the whole zone of a matching pod',
      scenario: { nodes: fourNodes(), pods: [...on('a1', labelled('web-1', { app: 'web' })), ...on('b1', labelled('web-2', { app: 'web' }))], moving: [mover(ZONE)] },
      expected: 'c1',
    },
    {
      name: 'zone anti-affinity with matching pods in every zone forbids',
      scenario: {
        nodes: [zonal('a1', 'us-east-1a')],
        pods: on('a1', labelled('db-1', { app: 'web' })),
        moving: [mover(ZONE)],
      },
      expected: '-',
      reason: /^anti-affinity with pod default\/db-1 in zone us-east-1a$/,
    },
    {
      name: 'symmetric: an existing pod whose anti-affinity matches the mover forbids its node',
      scenario: {
        nodes: [zonal('a1', 'us-east-1a')],
        pods: on('a1', labelled('db-1', { app: 'db' }, { podAntiAffinity: [term({ app: 'web' }, HOSTNAME)] })),
        moving: [labelled('web', { app: 'web' })],
      },
      expected: '-',
      reason: /anti-affinity of pod default\/db-1/,
    },
    {
      name: 'symmetric: an existing pod whose anti-affinity does not match the mover allows',
      scenario: {
        nodes: [zonal('a1', 'us-east-1a')],
        pods: on('a1', labelled('db-1', { app: 'db' }, { podAntiAffinity: [term({ app: 'batch' }, HOSTNAME)] })),
        moving: [labelled('web', { app: 'web' })],
      },
      expected: 'a1',
    },
    {
      name: 'symmetric anti-affinity only covers the namespaces of the term',
      scenario: {
        nodes: [zonal('a1', 'us-east-1a')],
        pods: on('a1', labelled('db-1', { app: 'db' }, { namespace: 'data', podAntiAffinity: [term({ app: 'web' }, HOSTNAME)] })),
        moving: [labelled('web', { app: 'web' })],
      },
      expected: 'a1',
    },
  ])('$name', run);

  it.each<Case>([
    {
      name: 'an anti-affine pod on the excluded node no longer repels (allows)',
      scenario: {
        nodes: [zonal('a1', 'us-east-1a')],
        pods: on('old', labelled('db-1', { app: 'db' }, { podAntiAffinity: [term({ app: 'web' }, ZONE)] })),
        moving: [labelled('web', { app: 'web' })],
      },
      expected: 'a1',
    },
    {
      name: 'an anti-affine pod on a node that stays still repels (forbids)',
      scenario: {
        nodes: [zonal('a1', 'us-east-1a'), zonal('a9', 'us-east-1a', { allocatable: { cpu: 0, memory: 0, pods: 10 } })],
        pods: on('a9', labelled('db-1', { app: 'db' }, { podAntiAffinity: [term({ app: 'web' }, ZONE)] })),
        moving: [labelled('web', { app: 'web' })],
      },
      expected: '-',
    },
  ])('$name', run);

  it('a pod placed earlier repels later ones through its own anti-affinity (symmetric)', () => {
    const db = labelled('db', { app: 'db' }, { podAntiAffinity: [term({ app: 'web' }, HOSTNAME)] });
    const web = labelled('web', { app: 'web' });
    const result = simulateScenario({ nodes: [zonal('a1', 'us-east-1a'), zonal('a2', 'us-east-1a')], moving: [web, db] });
    expect(destinations(result)).toEqual({ db: 'a1', web: 'a2' });
  });

  it('pods placed earlier in the simulation repel later ones', () => {
    const replica = (name: string): Pod => labelled(name, { app: 'web' }, { podAntiAffinity: [term({ app: 'web' }, HOSTNAME)] });
    const result = simulateScenario({ nodes: [zonal('a1', 'us-east-1a'), zonal('a2', 'us-east-1a')], moving: [replica('w1'), replica('w2'), replica('w3')] });
    const placed = Object.values(destinations(result));
    expect(placed.filter((d) => d !== '-').sort()).toEqual(['a1', 'a2']);
    expect(placed.filter((d) => d === '-')).toHaveLength(1);
  });
});

describe('topology spread', () => {
  // Existing web pods: 2 in us-east-1a (a1), 1 in us-east-1b (b1), 1 in us-east-1c (c1).
  const existing = (): Pod[] => [
    ...on('a1', labelled('w-a1', { app: 'web' }), labelled('w-a2', { app: 'web' })),
    ...on('b1', labelled('w-b', { app: 'web' })),
    ...on('c1', labelled('w-c', { app: 'web' })),
  ];
  const mover = (extra: Partial<ReturnType<typeof spread>> = {}, podExtra: Partial<Pod> = {}): Pod =>
    labelled('web', { app: 'web' }, { topologySpread: [spread({ app: 'web' }, ZONE, extra)], ...podExtra });
  it.each<Case>([
    {
      name: 'DoNotSchedule allows the domains that keep skew within maxSkew',
      scenario: { nodes: fourNodes(), pods: existing(), moving: [mover()] },
      expected: ['b1', 'c1'],
    },
    {
      name: 'DoNotSchedule forbids a domain that would exceed maxSkew',
      scenario: { nodes: onlyZoneAHasRoom(), pods: existing(), moving: [mover()] },
      expected: '-',
      reason: /topology spread on topology\.kubernetes\.io\/zone would reach skew 2 > maxSkew 1 in zone us-east-1a/,
    },
    {
      name: 'a larger maxSkew allows the crowded domain',
      scenario: { nodes: onlyZoneAHasRoom(), pods: existing(), moving: [mover({ maxSkew: 2 })] },
      expected: ['a1', 'a2'],
    },
    {
      name: 'with a nodeSelector (Honor), only the domains the pod can use count',
      scenario: { nodes: fourNodes(), pods: existing(), moving: [mover({}, { nodeSelector: { 'topology.kubernetes.io/zone': 'us-east-1a' } })] },
      expected: ['a1', 'a2'],
    },
    {
      name: 'ScheduleAnyway never blocks',
      scenario: { nodes: onlyZoneAHasRoom(), pods: existing(), moving: [mover({ whenUnsatisfiable: 'ScheduleAnyway' })] },
      expected: ['a1', 'a2'],
    },
    {
      name: 'nodeAffinityPolicy Honor: domains the pod cannot use do not count (allows)',
      scenario: {
        nodes: [zonal('a1', 'us-east-1a', { labels: { pool: 'x' } }), zonal('b1', 'us-east-1b')],
        pods: on('a1', labelled('w-a', { app: 'web' })),
        moving: [mover({}, { nodeSelector: { pool: 'x' } })],
      },
      expected: 'a1',
    },
    {
      name: 'nodeAffinityPolicy Ignore: every domain counts (forbids)',
      scenario: {
        nodes: [zonal('a1', 'us-east-1a', { labels: { pool: 'x' } }), zonal('b1', 'us-east-1b')],
        pods: on('a1', labelled('w-a', { app: 'web' })),
        moving: [mover({ nodeAffinityPolicy: 'Ignore' }, { nodeSelector: { pool: 'x' } })],
      },
      expected: '-',
    },
    {
      name: 'nodeTaintsPolicy Ignore (default): a tainted node still counts as a domain (forbids)',
      scenario: {
        nodes: [zonal('a1', 'us-east-1a'), zonal('b1', 'us-east-1b', { taints: [{ key: 'dedicated', effect: 'NoSchedule' }] })],
        pods: on('a1', labelled('w-a', { app: 'web' })),
        moving: [mover()],
      },
      expected: '-',
    },
    {
      name: 'nodeTaintsPolicy Honor: an untolerated tainted node is not a domain (allows)',
      scenario: {
        nodes: [zonal('a1', 'us-east-1a'), zonal('b1', 'us-east-1b', { taints: [{ key: 'dedicated', effect: 'NoSchedule' }] })],
        pods: on('a1', labelled('w-a', { app: 'web' })),
        moving: [mover({ nodeTaintsPolicy: 'Honor' })],
      },
      expected: 'a1',
    },
    {
      name: 'minDomains above the domain count makes the minimum 0 (forbids)',
      scenario: { nodes: [zonal('a1', 'us-east-1a')], pods: on('a1', labelled('w-a', { app: 'web' })), moving: [mover({ minDomains: 2 })] },
      expected: '-',
    },
    {
      name: 'minDomains met keeps the real minimum (allows)',
      scenario: { nodes: [zonal('a1', 'us-east-1a')], pods: on('a1', labelled('w-a', { app: 'web' })), moving: [mover({ minDomains: 1 })] },
      expected: 'a1',
    },
    {
      name: 'pods of other namespaces do not count (allows)',
      scenario: {
        nodes: [zonal('a1', 'us-east-1a'), zonal('b1', 'us-east-1b', { allocatable: full })],
        pods: on('a1', labelled('w-a', { app: 'web' }, { namespace: 'other' })),
        moving: [mover()],
      },
      expected: 'a1',
    },
    {
      name: 'pods of the same namespace count (forbids)',
      scenario: {
        nodes: [zonal('a1', 'us-east-1a'), zonal('b1', 'us-east-1b', { allocatable: full })],
        pods: on('a1', labelled('w-a', { app: 'web' })),
        moving: [mover()],
      },
      expected: '-',
    },
    {
      name: 'pods on the excluded node no longer count (allows)',
      scenario: { nodes: [zonal('a1', 'us-east-1a'), zonal('b1', 'us-east-1b')], pods: on('a1', labelled('w-a', { app: 'web' })), moving: [mover()] },
      expected: 'b1',
    },
    {
      // `old` (excluded) is the only node of us-east-1a: that zone is no longer a domain.
      name: 'a zone whose every node leaves is no longer a domain (allows)',
      scenario: { nodes: [zonal('b1', 'us-east-1b')], pods: on('b1', labelled('w-b', { app: 'web' })), moving: [mover()] },
      expected: 'b1',
    },
    {
      name: 'a zone that keeps a node stays a domain, even a full one (forbids)',
      scenario: {
        nodes: [zonal('a1', 'us-east-1a', { allocatable: full }), zonal('b1', 'us-east-1b')],
        pods: on('b1', labelled('w-b', { app: 'web' })),
        moving: [mover()],
      },
      expected: '-',
    },
    {
      name: 'hostname spread forbids a node already ahead',
      scenario: {
        nodes: [zonal('a1', 'us-east-1a'), zonal('a2', 'us-east-1a', { allocatable: full })],
        pods: on('a1', labelled('w-1', { app: 'web' })),
        moving: [labelled('web', { app: 'web' }, { topologySpread: [spread({ app: 'web' }, HOSTNAME)] })],
      },
      expected: '-',
    },
    {
      name: 'hostname spread allows the node that is behind',
      scenario: {
        nodes: [zonal('a1', 'us-east-1a'), zonal('a2', 'us-east-1a')],
        pods: on('a1', labelled('w-1', { app: 'web' })),
        moving: [labelled('web', { app: 'web' }, { topologySpread: [spread({ app: 'web' }, HOSTNAME)] })],
      },
      expected: 'a2',
    },
  ])('$name', run);

  it('spreads the moving replicas themselves', () => {
    const replicas = ['r1', 'r2', 'r3'].map((name) => labelled(name, { app: 'web' }, { topologySpread: [spread({ app: 'web' }, ZONE)] }));
    const result = simulateScenario({ nodes: [zonal('a1', 'us-east-1a'), zonal('b1', 'us-east-1b'), zonal('c1', 'us-east-1c')], moving: replicas });
    expect(Object.values(destinations(result)).sort()).toEqual(['a1', 'b1', 'c1']);
  });
});

describe('reasons', () => {
  it('explains a cpu shortage with the pod requests', () => {
    const result = simulateScenario({ nodes: [zonal('a1', 'us-east-1a')], moving: [pod({ name: 'huge', requests: { cpu: 20000, memory: 4 * Gi } })] });
    expect(reasons(result)).toEqual(['no node has room for 20000m cpu / 4Gi memory']);
  });
});
