// Tolerations, label selectors and host ports on their own.
import { describe, expect, it } from 'vitest';
import type { LabelSelector, Taint, Toleration } from '../../src/core/model/types.ts';
import { normalizeHostPorts, portsConflict } from '../../src/core/scheduling/hostPorts.ts';
import { matchesSelector, withMatchLabelKeys } from '../../src/core/scheduling/labelSelector.ts';
import { firstUntoleratedTaint, toleratesTaint } from '../../src/core/scheduling/taints.ts';
import { formatRequests } from '../../src/core/scheduling/resources.ts';
import { Gi, Mi } from '../builders.ts';

describe('tolerations', () => {
  const taint: Taint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
  it.each<{ name: string; toleration: Toleration; tolerates: boolean }>([
    { name: 'Equal with key and value', toleration: { key: 'dedicated', value: 'gpu' }, tolerates: true },
    { name: 'Equal with another value', toleration: { key: 'dedicated', value: 'cpu' }, tolerates: false },
    { name: 'Exists on the key', toleration: { key: 'dedicated', operator: 'Exists' }, tolerates: true },
    { name: 'Exists without key tolerates everything', toleration: { operator: 'Exists' }, tolerates: true },
    { name: 'the right effect', toleration: { key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }, tolerates: true },
    { name: 'another effect', toleration: { key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }, tolerates: false },
    { name: 'another key', toleration: { key: 'other', operator: 'Exists' }, tolerates: false },
  ])('$name', ({ toleration, tolerates }) => {
    expect(toleratesTaint(toleration, taint)).toBe(tolerates);
  });

  it('PreferNoSchedule taints never need a toleration', () => {
    expect(firstUntoleratedTaint([], [{ key: 'soft', effect: 'PreferNoSchedule' }])).toBeUndefined();
    expect(firstUntoleratedTaint([], [{ key: 'hard', effect: 'NoExecute' }])?.key).toBe('hard');
  });
});

describe('label selectors', () => {
  const labels = { app: 'web', tier: 'front' };
  it.each<{ name: string; selector: LabelSelector | undefined; matches: boolean }>([
    { name: 'absent selector matches nothing', selector: undefined, matches: false },
    { name: 'empty selector matches everything', selector: {}, matches: true },
    { name: 'matchLabels', selector: { matchLabels: { app: 'web' } }, matches: true },
    { name: 'matchLabels mismatch', selector: { matchLabels: { app: 'db' } }, matches: false },
    { name: 'In', selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'back'] }] }, matches: true },
    { name: 'NotIn', selector: { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['front'] }] }, matches: false },
    { name: 'Exists', selector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] }, matches: true },
    { name: 'DoesNotExist', selector: { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, matches: false },
  ])('$name', ({ selector, matches }) => {
    expect(matchesSelector(selector, labels)).toBe(matches);
  });

  it('matchLabelKeys adds the pod own values', () => {
    const selector = withMatchLabelKeys({ matchLabels: { app: 'web' } }, ['rev', 'absent'], { app: 'web', rev: '2' });
    expect(matchesSelector(selector, { app: 'web', rev: '2' })).toBe(true);
    expect(matchesSelector(selector, { app: 'web', rev: '1' })).toBe(false);
  });
});

describe('host ports', () => {
  const [any, ip1, ip2, udp] = normalizeHostPorts([
    { port: 80, protocol: 'TCP' },
    { port: 80, protocol: 'TCP', hostIP: '10.0.0.1' },
    { port: 80, protocol: 'TCP', hostIP: '10.0.0.2' },
    { port: 80, protocol: 'UDP' },
  ]);
  it.each([
    { name: 'all addresses overlap a specific one', a: any!, b: ip1!, conflict: true },
    { name: 'two specific addresses do not overlap', a: ip1!, b: ip2!, conflict: false },
    { name: 'another protocol does not clash', a: any!, b: udp!, conflict: false },
  ])('$name', ({ a, b, conflict }) => {
    expect(portsConflict(a, b)).toBe(conflict);
  });

  it('port 0 means no host port', () => {
    expect(normalizeHostPorts([{ port: 0, protocol: 'TCP' }])).toEqual([]);
  });
});

describe('request formatting', () => {
  it('prints cpu in millicores and memory in binary units', () => {
    expect(formatRequests({ cpu: 2000, memory: 4 * Gi })).toBe('2000m cpu / 4Gi memory');
    expect(formatRequests({ memory: 1536 * Mi, cpu: 250, 'nvidia.com/gpu': 1 })).toBe('250m cpu / 1536Mi memory / 1 nvidia.com/gpu');
  });

  it.each([
    ['hugepages-2Mi', 100 * Mi, '100Mi hugepages-2Mi'],
    ['hugepages-1Gi', 2 * Gi, '2Gi hugepages-1Gi'],
    ['ephemeral-storage', 20 * Gi, '20Gi ephemeral-storage'],
    ['vpc.amazonaws.com/pod-eni', 1, '1 vpc.amazonaws.com/pod-eni'],
  ])('prints %s in Kubernetes units', (key, value, text) => {
    expect(formatRequests({ [key]: value })).toBe(text);
  });
});
