import { DescribeClusterCommand, EKSClient, ResourceNotFoundException } from '@aws-sdk/client-eks';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { EksClusterError, describeClusterEndpoint } from '../../src/adapters/kubernetes/eksCluster.ts';

const eks = mockClient(EKSClient);
const client = () => new EKSClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });

afterEach(() => eks.reset());

describe('describeClusterEndpoint', () => {
  it('maps DescribeCluster to the server URL and base64 CA', async () => {
    eks.on(DescribeClusterCommand, { name: 'prod-east' }).resolves({
      cluster: {
        name: 'prod-east',
        status: 'ACTIVE',
        endpoint: 'https://ABCDEF0123456789.gr7.us-east-1.eks.amazonaws.com',
        certificateAuthority: { data: 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==' },
      },
    });
    const endpoint = await describeClusterEndpoint('prod-east', { client: client() });
    expect(endpoint).toEqual({
      server: 'https://ABCDEF0123456789.gr7.us-east-1.eks.amazonaws.com',
      caData: 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==',
    });
    expect(eks.commandCalls(DescribeClusterCommand)).toHaveLength(1);
    expect(eks.commandCalls(DescribeClusterCommand)[0]?.args[0].input).toEqual({ name: 'prod-east' });
  });

  it('turns an SDK error into an EksClusterError naming the cluster and the AWS error', async () => {
    eks.on(DescribeClusterCommand).rejects(
      new ResourceNotFoundException({ message: 'No cluster found for name: nope.', $metadata: {} }),
    );
    const attempt = describeClusterEndpoint('nope', { client: client() });
    await expect(attempt).rejects.toBeInstanceOf(EksClusterError);
    await expect(attempt).rejects.toThrow(
      'EKS cluster "nope": eks:DescribeCluster failed: ResourceNotFoundException: No cluster found for name: nope.',
    );
    const error = await attempt.catch((e: unknown) => e);
    expect(error).toMatchObject({ clusterName: 'nope', operation: 'eks:DescribeCluster' });
  });

  it('refuses a cluster that has no endpoint or CA yet, saying its status', async () => {
    eks.on(DescribeClusterCommand).resolves({ cluster: { name: 'new', status: 'CREATING' } });
    await expect(describeClusterEndpoint('new', { client: client() })).rejects.toThrow(
      /EKS cluster "new".*no API endpoint yet \(cluster status CREATING\)/,
    );
    eks.on(DescribeClusterCommand).resolves({
      cluster: { name: 'new', status: 'ACTIVE', endpoint: 'https://x.eks.amazonaws.com', certificateAuthority: {} },
    });
    await expect(describeClusterEndpoint('new', { client: client() })).rejects.toThrow(/no certificate authority data/);
  });
});
