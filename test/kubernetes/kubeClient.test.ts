import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeClusterCommand, EKSClient } from '@aws-sdk/client-eks';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import {
  KubernetesApiError,
  eksKubeConfig,
  kubeConfigFromEndpoint,
  kubeConfigFromFile,
} from '../../src/adapters/kubernetes/kubeClient.ts';
import { decodeEksToken } from '../../src/adapters/kubernetes/eksToken.ts';
import { KubeWriter } from '../../src/adapters/kubernetes/kubeWriter.ts';
import { LiveClusterSource } from '../../src/adapters/kubernetes/liveClusterSource.ts';
import { kubeNode, kubePod, startFakeKubeApi } from '../support/fakeKubeApi.ts';
import type { FakeKubeApi } from '../support/fakeKubeApi.ts';

const N1 = 'ip-10-0-1-7.ec2.internal';
const objects = [kubeNode(N1), kubePod('default', 'web-1', { node: N1 })];

let api: FakeKubeApi | undefined;
const eks = mockClient(EKSClient);
afterEach(async () => {
  await api?.close();
  api = undefined;
  eks.reset();
});

describe('authentication', () => {
  it('a refused token becomes a clear KubernetesApiError, and nothing is written', async () => {
    api = await startFakeKubeApi({ objects });
    const kc = kubeConfigFromEndpoint({ server: api.url, caData: api.caData, token: 'wrong-token' });
    const error = await new LiveClusterSource(kc).read().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubernetesApiError);
    const k = error as KubernetesApiError;
    expect(k.statusCode).toBe(401);
    expect(k.unauthorized).toBe(true);
    expect(k.operation).toBe('list');
    expect(k.message).toMatch(/^Kubernetes API: list \S+ failed: the API server refused the credentials \(401 Unauthorized\)/);
    expect(k.message).toMatch(/access entry/);

    const writerError = await new KubeWriter(kc).deleteNode(N1).catch((e: unknown) => e);
    expect(writerError).toMatchObject({ statusCode: 401, operation: 'delete', resource: `Node ${N1}` });
    expect(api.store.get('Node', N1)).toBeDefined();
    expect(api.requests.every((r) => r.status === 401)).toBe(true);
  });

  it('asks a token provider before every request', async () => {
    let calls = 0;
    api = await startFakeKubeApi({ objects, authorize: (t) => t !== undefined && t.startsWith('rotating-') });
    const kc = kubeConfigFromEndpoint({
      server: api.url,
      caData: api.caData,
      token: async () => {
        calls += 1;
        return `rotating-${calls}`;
      },
    });
    const writer = new KubeWriter(kc);
    await writer.getNode(N1);
    await writer.getNode(N1);
    expect(api.requests.map((r) => r.token)).toEqual(['rotating-1', 'rotating-2']);
  });

  it('refuses a server whose certificate the CA does not vouch for', async () => {
    api = await startFakeKubeApi({ objects });
    const otherCa = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64');
    const kc = kubeConfigFromEndpoint({ server: api.url, caData: otherCa, token: api.token });
    const error = await new KubeWriter(kc).getNode(N1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubernetesApiError);
    expect(error).toMatchObject({ statusCode: undefined, operation: 'get', resource: `Node ${N1}` });
    expect((error as Error).message).toMatch(/no answer from the API server/);
  });

  it('names the resource when the server cannot be reached', async () => {
    api = await startFakeKubeApi({ objects });
    const { url, caData, token } = api;
    await api.close();
    api = undefined;
    const error = await new KubeWriter(kubeConfigFromEndpoint({ server: url, caData, token })).deleteNode(N1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubernetesApiError);
    expect((error as Error).message).toMatch(/delete Node ip-10-0-1-7\.ec2\.internal failed: no answer from the API server: .*ECONNREFUSED/);
  });
});

describe('eksKubeConfig', () => {
  it('connects with DescribeCluster endpoint + CA and an EKS token bound to the cluster, refreshed as it ages', async () => {
    let now = Date.parse('2026-11-21T12:00:00Z');
    api = await startFakeKubeApi({
      objects,
      // Accept only EKS tokens for this cluster, as the EKS authenticator would after STS answered.
      authorize: (t) => {
        if (t === undefined || !t.startsWith('k8s-aws-v1.')) return false;
        const url = decodeEksToken(t);
        return (
          url.hostname === 'sts.us-east-1.amazonaws.com' &&
          url.searchParams.get('Action') === 'GetCallerIdentity' &&
          (url.searchParams.get('X-Amz-SignedHeaders') ?? '').split(';').includes('x-k8s-aws-id')
        );
      },
    });
    eks.on(DescribeClusterCommand, { name: 'prod-east' }).resolves({
      cluster: { name: 'prod-east', status: 'ACTIVE', endpoint: api.url, certificateAuthority: { data: api.caData } },
    });
    const { kubeConfig, tokens } = await eksKubeConfig({
      clusterName: 'prod-east',
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      eksClient: new EKSClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } }),
      now: () => now,
    });
    const writer = new KubeWriter(kubeConfig);
    expect(await writer.getNode(N1)).toMatchObject({ exists: true });
    now += 5 * 60_000;
    expect(await writer.getNode(N1)).toMatchObject({ exists: true });
    now += 10 * 60_000;
    expect(await writer.getNode(N1)).toMatchObject({ exists: true });
    const presented = api.requests.map((r) => r.token);
    expect(presented[0]).toBe(presented[1]);
    expect(presented[2]).not.toBe(presented[1]);
    expect(tokens.signings).toBe(2);
  });
});

describe('kubeConfigFromFile', () => {
  it('loads a kubeconfig file and its named context', async () => {
    api = await startFakeKubeApi({ objects });
    const dir = await mkdtemp(join(tmpdir(), 'kubeconfig-'));
    try {
      const file = join(dir, 'config');
      await writeFile(
        file,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters:',
          '- name: fake',
          '  cluster:',
          `    server: ${api.url}`,
          `    certificate-authority-data: ${api.caData}`,
          'users:',
          '- name: fake-user',
          '  user:',
          `    token: ${api.token}`,
          'contexts:',
          '- name: fake',
          '  context: { cluster: fake, user: fake-user }',
          '- name: other',
          '  context: { cluster: fake, user: fake-user }',
          'current-context: other',
        ].join('\n'),
      );
      const cluster = await new LiveClusterSource(kubeConfigFromFile(file, 'fake')).read();
      expect(cluster.nodes.map((n) => n.name)).toEqual([N1]);
      expect(() => kubeConfigFromFile(file, 'missing')).toThrow(/no context named "missing"/);
      expect(() => kubeConfigFromFile(join(dir, 'absent'))).toThrow(KubernetesApiError);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
