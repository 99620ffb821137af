// NODEPOOLS_SOURCE=kubernetes: karpenter.sh/v1 NodePools listed from the cluster (paged) and parsed
// exactly as a NodePool file is.
import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeConfigFromEndpoint } from '../../src/adapters/kubernetes/kubeClient.ts';
import { readNodePoolsFromKubernetes } from '../../src/app/wiring.ts';
import { startFakeKubeApi, type FakeKubeApi } from '../support/fakeKubeApi.ts';

const pool = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name, annotations: { 'eks-consolidator/launch-template': 'lt-0abc', 'eks-consolidator/subnets': 'subnet-1,subnet-2' } },
  spec: {
    template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } },
    disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '30s', ...extra },
  },
});

/** A KubeConfig whose CustomObjectsApi answers from `pages` and records the requests. */
function stubKubeConfig(pages: unknown[], requests: unknown[]): KubeConfig {
  const api = {
    listClusterCustomObject: async (params: unknown) => {
      requests.push(params);
      return pages.shift();
    },
  };
  return { makeApiClient: () => api } as unknown as KubeConfig;
}

describe('NodePools from the cluster', () => {
  it('lists every page and parses the pools with their launch settings', async () => {
    const requests: unknown[] = [];
    const kc = stubKubeConfig(
      [
        { apiVersion: 'karpenter.sh/v1', kind: 'NodePoolList', metadata: { continue: 'next' }, items: [pool('a')] },
        { apiVersion: 'karpenter.sh/v1', kind: 'NodePoolList', metadata: {}, items: [pool('b')] },
      ],
      requests,
    );
    const pools = await readNodePoolsFromKubernetes(kc, 1);
    expect(pools.map((p) => [p.name, p.consolidationPolicy, p.consolidateAfterMs])).toEqual([
      ['a', 'WhenEmpty', 30_000],
      ['b', 'WhenEmpty', 30_000],
    ]);
    expect(pools[0]!.launch).toMatchObject({ 'eks-consolidator/launch-template': 'lt-0abc', 'eks-consolidator/subnets': 'subnet-1,subnet-2' });
    expect(requests).toEqual([
      { group: 'karpenter.sh', version: 'v1', plural: 'nodepools', limit: 1 },
      { group: 'karpenter.sh', version: 'v1', plural: 'nodepools', limit: 1, _continue: 'next' },
    ]);
  });

  it('a bad NodePool is an error naming the source, the pool and the field', async () => {
    const kc = stubKubeConfig([{ items: [pool('a', { consolidateAfter: 'soon' })] }], []);
    await expect(readNodePoolsFromKubernetes(kc)).rejects.toThrow(/^Kubernetes API \(nodepools\.karpenter\.sh\): NodePool "a": spec\.disruption\.consolidateAfter/);
  });

  it('no NodePool at all is an error', async () => {
    const kc = stubKubeConfig([{ items: [] }], []);
    await expect(readNodePoolsFromKubernetes(kc)).rejects.toThrow(/no NodePool \(karpenter\.sh\/v1\) found in the cluster/);
  });

  describe('against an API without the Karpenter CRDs', () => {
    let kube: FakeKubeApi;
    beforeAll(async () => {
      kube = await startFakeKubeApi();
    });
    afterAll(async () => {
      await kube.close();
    });

    it('says which list failed and how', async () => {
      const kc = kubeConfigFromEndpoint({ server: kube.url, caData: kube.caData, token: kube.token });
      await expect(readNodePoolsFromKubernetes(kc)).rejects.toThrow(/Kubernetes API: list nodepools\.karpenter\.sh failed: HTTP 404/);
      expect(kube.requests[0]).toMatchObject({ method: 'GET', path: '/apis/karpenter.sh/v1/nodepools' });
    });
  });
});
