// Which actuator acts on each pool: Karpenter NodeClaims where Karpenter serves the pool (ACTUATOR=auto),
// EC2 launch templates elsewhere, or one of them for every pool when the setting forces it.
import { describe, expect, it } from 'vitest';
import { actuatorNotes, chooseActuators, parseActuatorSetting, type ActuatorChoiceInput, type ActuatorSetting } from '../../src/core/disruption/actuatorChoice.ts';
import type { KarpenterPresence } from '../../src/core/disruption/coexistence.ts';
import { InputError } from '../../src/core/errors.ts';
import type { NodeClaimTemplateSource, NodePool } from '../../src/core/model/types.ts';
import { node, nodePool } from '../builders.ts';

const template: NodeClaimTemplateSource = {
  annotations: {},
  hashAnnotations: {},
  startupTaints: [],
  nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
  requirements: [],
};

/** A pool with a nodeClassRef (a NodeClaim can be built from it) unless `withTemplate` is false. */
const pool = (name: string, withTemplate = true): NodePool => nodePool({ name, ...(withTemplate ? { nodeClaimTemplate: template } : {}) });
const registered = (name: string, nodePool: string) => node({ name, nodePool, labels: { 'karpenter.sh/registered': 'true', 'karpenter.sh/initialized': 'true' } });
const plain = (name: string, nodePool: string) => node({ name, nodePool });

interface Case {
  readonly setting: ActuatorSetting;
  readonly presence: KarpenterPresence;
  readonly poolsFromCluster: boolean;
  /** Nodes of pool `p`: with Karpenter's registration labels or without. */
  readonly nodes: 'registered' | 'plain' | 'none';
  readonly withTemplate: boolean;
  readonly actuator: 'karpenter' | 'ec2';
  readonly why: RegExp;
}

const cases: [string, Case][] = [
  ['auto, NodePools from a file, nodes without Karpenter labels: ec2', { setting: 'auto', presence: 'auto', poolsFromCluster: false, nodes: 'plain', withTemplate: true, actuator: 'ec2', why: /no sign of Karpenter/ }],
  ['auto, NodePools from a file, a pool without nodes: ec2', { setting: 'auto', presence: 'auto', poolsFromCluster: false, nodes: 'none', withTemplate: true, actuator: 'ec2', why: /no sign of Karpenter/ }],
  ["auto, the pool's nodes carry Karpenter's registration labels: karpenter", { setting: 'auto', presence: 'auto', poolsFromCluster: false, nodes: 'registered', withTemplate: true, actuator: 'karpenter', why: /registration labels/ }],
  ["auto, NodePools read from the cluster's API: karpenter", { setting: 'auto', presence: 'auto', poolsFromCluster: true, nodes: 'plain', withTemplate: true, actuator: 'karpenter', why: /cluster's API/ }],
  ['auto, KARPENTER=present: karpenter', { setting: 'auto', presence: 'present', poolsFromCluster: false, nodes: 'plain', withTemplate: true, actuator: 'karpenter', why: /KARPENTER=present/ }],
  ['auto, KARPENTER=absent wins over registration labels: ec2', { setting: 'auto', presence: 'absent', poolsFromCluster: false, nodes: 'registered', withTemplate: true, actuator: 'ec2', why: /KARPENTER=absent/ }],
  ["auto, KARPENTER=absent wins over NodePools from the cluster's API: ec2", { setting: 'auto', presence: 'absent', poolsFromCluster: true, nodes: 'plain', withTemplate: true, actuator: 'ec2', why: /KARPENTER=absent/ }],
  ['ACTUATOR=ec2 forces ec2 where Karpenter serves the pool', { setting: 'ec2', presence: 'present', poolsFromCluster: true, nodes: 'registered', withTemplate: true, actuator: 'ec2', why: /^ACTUATOR=ec2$/ }],
  ['ACTUATOR=karpenter forces karpenter where no Karpenter is seen', { setting: 'karpenter', presence: 'absent', poolsFromCluster: false, nodes: 'plain', withTemplate: true, actuator: 'karpenter', why: /^ACTUATOR=karpenter$/ }],
  ['auto picks karpenter for a pool without nodeClassRef, and says it cannot launch', { setting: 'auto', presence: 'auto', poolsFromCluster: true, nodes: 'plain', withTemplate: false, actuator: 'karpenter', why: /no spec\.template\.spec\.nodeClassRef, so no replacement can be launched through Karpenter/ }],
  ['ACTUATOR=karpenter on a pool without nodeClassRef says it cannot launch', { setting: 'karpenter', presence: 'auto', poolsFromCluster: false, nodes: 'plain', withTemplate: false, actuator: 'karpenter', why: /^ACTUATOR=karpenter; but the NodePool has no spec\.template\.spec\.nodeClassRef/ }],
  ['ec2 needs no nodeClassRef', { setting: 'auto', presence: 'absent', poolsFromCluster: false, nodes: 'plain', withTemplate: false, actuator: 'ec2', why: /^KARPENTER=absent$/ }],
];

describe('chooseActuators', () => {
  it.each(cases)('%s', (_name, c) => {
    const nodes = c.nodes === 'none' ? [] : [c.nodes === 'registered' ? registered('n1', 'p') : plain('n1', 'p')];
    const input: ActuatorChoiceInput = { nodePools: [pool('p', c.withTemplate)], nodes, setting: c.setting, presence: c.presence, poolsFromCluster: c.poolsFromCluster };
    const choice = chooseActuators(input).get('p');
    expect(choice?.actuator).toBe(c.actuator);
    expect(choice?.why).toMatch(c.why);
    // The plan gets a note exactly when a karpenter pool cannot launch.
    const notes = actuatorNotes(input.nodePools, chooseActuators(input));
    expect(notes).toHaveLength(c.actuator === 'karpenter' && !c.withTemplate ? 1 : 0);
  });

  it('chooses per pool: a pool whose nodes Karpenter registered, next to one it does not serve', () => {
    const choices = chooseActuators({
      nodePools: [pool('default'), pool('gpu'), pool('legacy', false)],
      nodes: [registered('a', 'default'), plain('b', 'default'), registered('c', 'gpu'), plain('d', 'legacy')],
      setting: 'auto',
      presence: 'auto',
      poolsFromCluster: false,
    });
    expect(Object.fromEntries([...choices].map(([p, c]) => [p, c.actuator]))).toEqual({ default: 'karpenter', gpu: 'karpenter', legacy: 'ec2' });
  });

  it('only the pools it is given (the pass scope) are in the result', () => {
    const choices = chooseActuators({ nodePools: [pool('a')], nodes: [registered('x', 'b')], setting: 'auto', presence: 'auto', poolsFromCluster: false });
    expect([...choices.keys()]).toEqual(['a']);
  });

  it('the note names the pool and the way out', () => {
    const pools = [pool('bare', false)];
    const [note] = actuatorNotes(pools, chooseActuators({ nodePools: pools, nodes: [], setting: 'karpenter', presence: 'auto', poolsFromCluster: false }));
    expect(note).toMatch(/^NodePool "bare" is acted on through Karpenter NodeClaims but has no spec\.template\.spec\.nodeClassRef/);
    expect(note).toMatch(/set ACTUATOR=ec2$/);
  });
});

describe('parseActuatorSetting', () => {
  it.each([
    [undefined, 'auto'],
    ['', 'auto'],
    ['auto', 'auto'],
    ['Karpenter', 'karpenter'],
    [' ec2 ', 'ec2'],
  ] as const)('%s -> %s', (text, expected) => {
    expect(parseActuatorSetting(text)).toBe(expected);
  });

  it('refuses anything else, naming the source', () => {
    expect(() => parseActuatorSetting('fleet', '--actuator')).toThrow(InputError);
    expect(() => parseActuatorSetting('fleet', '--actuator')).toThrow('--actuator: "fleet" is not auto, karpenter or ec2');
  });
});
