// Notes about the input (and the cases an outside audit found silent): unknown prices and why,
// unmanaged clusters, pods bound to nodes not in the input; JSON errors with a line number.
import { describe, expect, it } from 'vitest';
import { decodeDocuments } from '../../src/adapters/files/documents.ts';
import { indexCatalog, nodePricePerHour } from '../../src/core/disruption/prices.ts';
import { InputError } from '../../src/core/errors.ts';
import { parseCatalog } from '../../src/core/input/catalog.ts';
import { parseClusterObjects } from '../../src/core/input/cluster.ts';
import { defaultNodePool } from '../../src/core/input/nodePools.ts';
import { orphanPodsNote, unknownPriceNotes, unmanagedClusterNote } from '../../src/core/inputNotes.ts';
import { kubeNode, kubePod } from '../support/fakeKubeApi.ts';

const catalog = parseCatalog({
  region: 'us-east-1',
  instanceTypes: [{ name: 'm5.large', capacity: { cpu: '2', memory: '8Gi' }, offerings: [{ zone: 'us-east-1a', capacityType: 'on-demand', price: 0.096 }] }],
});
const notesFor = (...items: Record<string, unknown>[]) =>
  unknownPriceNotes(parseClusterObjects(items), [defaultNodePool()], catalog, indexCatalog(catalog)).join(' | ');

describe('unknown price notes say why', () => {
  it.each([
    ['zone of another region', kubeNode('a', { zone: 'eu-west-1a' }), 'zone eu-west-1a has no offerings in the catalog (catalog region us-east-1)'],
    ['type not in the catalog', kubeNode('a', { instanceType: 'x9.huge' }), 'instance type x9.huge is not in the catalog (catalog region us-east-1)'],
    ['capacity type misspelled', kubeNode('a', { labels: { 'karpenter.sh/capacity-type': 'ondemand' } }), 'its karpenter.sh/capacity-type label is missing or not one of on-demand, spot'],
    ['no such offering', kubeNode('a', { capacityType: 'spot' }), 'the catalog has no spot offering of m5.large in us-east-1a'],
  ])('%s', (_name, item, cause) => {
    expect(notesFor(item)).toContain(`price unknown for 1 node(s) (a): ${cause}`);
  });

  it('Windows nodes are not priced at the catalog\'s Linux prices: unknown, with one note for all of them', () => {
    const windows = { 'kubernetes.io/os': 'windows' };
    const cluster = parseClusterObjects([
      kubeNode('win-a', { labels: windows }),
      kubeNode('win-b', { labels: windows, capacityType: 'spot' }),
      kubeNode('linux', {}),
    ]);
    const index = indexCatalog(catalog);
    expect(cluster.nodes.map((n) => nodePricePerHour(n, index))).toEqual([undefined, undefined, 0.096]);
    expect(unknownPriceNotes(cluster, [defaultNodePool()], catalog, index)).toEqual([
      'price unknown for 2 node(s) (win-a, win-b): their kubernetes.io/os is windows and the catalog has linux prices only ' +
        '(a windows instance costs more, its licence included), so no price is assumed; ' +
        'such nodes are shown with price ? / null, may be deleted but are never replaced, and their savings are not counted',
    ]);
  });

  it('a node without a kubernetes.io/os label is priced as Linux', () => {
    const item = kubeNode('a');
    delete ((item['metadata'] as Record<string, unknown>)['labels'] as Record<string, string>)['kubernetes.io/os'];
    const cluster = parseClusterObjects([item]);
    expect(nodePricePerHour(cluster.nodes[0]!, indexCatalog(catalog))).toBe(0.096);
  });

  it('one note per cause, naming a few nodes', () => {
    const nodes = ['a', 'b', 'c', 'd'].map((n) => kubeNode(n, { zone: 'eu-west-1a' }));
    expect(notesFor(...nodes)).toContain('price unknown for 4 node(s) (a, b, c and 1 more): zone eu-west-1a');
  });

  it('no note when every price is known, or for nodes outside the configured pools', () => {
    expect(notesFor(kubeNode('a'), kubeNode('b', { pool: 'elsewhere', zone: 'eu-west-1a' }))).toBe('');
  });
});

describe('cluster notes', () => {
  it('a cluster without karpenter.sh/nodepool labels', () => {
    const cluster = parseClusterObjects([kubeNode('a', { pool: null })]);
    expect(unmanagedClusterNote(cluster, [defaultNodePool()])[0]).toContain('none of the 1 node(s) carries the karpenter.sh/nodepool label');
    expect(unmanagedClusterNote(parseClusterObjects([kubeNode('a')]), [defaultNodePool()])).toEqual([]);
  });

  it.each([
    ['self-managed nodes: how to label them', {}, 'kubectl label node <node> karpenter.sh/nodepool=default', 'left alone on purpose'],
    ['managed node group nodes: left alone, and why', { 'eks.amazonaws.com/nodegroup': 'ng-general' }, 'left alone on purpose (its Auto Scaling group would relaunch', 'kubectl label'],
  ])('the unlabelled-cluster note for %s', (_name, labels, says, never) => {
    const note = unmanagedClusterNote(parseClusterObjects([kubeNode('a', { pool: null, labels })]), [defaultNodePool()]).join(' ');
    expect(note).toContain(says);
    expect(note).not.toContain(never);
  });

  it('pods bound to nodes not in the input', () => {
    const cluster = parseClusterObjects([kubeNode('a'), kubePod('default', 'lost', { node: 'gone' }), kubePod('default', 'here', { node: 'a' })]);
    expect(orphanPodsNote(cluster)).toEqual([
      '1 pod(s) are bound to nodes that are not in the input (default/lost on gone) and were left out; dump nodes and pods together (kubectl get nodes,pods,... -A -o json)',
    ]);
  });
});

describe('JSON errors', () => {
  it('give the line and column, e.g. for two kubectl outputs in one file', () => {
    let error: unknown;
    try {
      decodeDocuments('\n{"kind":"List","items":[]}\n{"kind":"List","items":[]}\n');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).problem).toMatch(/\(line 3, column 1\)$/);
  });
});
