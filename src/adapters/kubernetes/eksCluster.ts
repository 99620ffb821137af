// Where an EKS cluster's Kubernetes API lives: its endpoint and the CA that signs the endpoint's
// certificate, as EKS `DescribeCluster` reports them. This is what `aws eks update-kubeconfig` writes
// into a kubeconfig; the Lambda asks for it at cold start instead of shipping a kubeconfig.
import { awsDeadlines } from '../aws/deadlines.ts';
import { DescribeClusterCommand, EKSClient } from '@aws-sdk/client-eks';

/** The API server of a cluster, as a kubeconfig `cluster` entry needs it. */
export interface ClusterEndpoint {
  /** `https://<id>.<suffix>.<region>.eks.amazonaws.com`. */
  readonly server: string;
  /** The cluster CA certificate, base64-encoded PEM (kubeconfig `certificate-authority-data`). */
  readonly caData: string;
}

/**
 * Reaching an EKS cluster failed before any Kubernetes call: DescribeCluster was refused or returned
 * no endpoint, or no AWS credentials could be found to sign the Kubernetes token.
 */
export class EksClusterError extends Error {
  override readonly name = 'EksClusterError';
  constructor(
    readonly clusterName: string,
    /** The step that failed, e.g. `eks:DescribeCluster`, `sts:GetCallerIdentity presign`. */
    readonly operation: string,
    /** What went wrong, in one sentence. */
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`EKS cluster "${clusterName}": ${operation} failed: ${problem}`, options);
  }
}

export interface DescribeClusterEndpointOptions {
  /** A client to use (tests pass a mocked one); default: a new EKSClient for `region`. */
  readonly client?: EKSClient;
  /** Region of the cluster when no client is given; default: the SDK's own resolution (AWS_REGION). */
  readonly region?: string;
}

/** Reads the endpoint and CA of `clusterName` from EKS DescribeCluster. */
export async function describeClusterEndpoint(
  clusterName: string,
  options: DescribeClusterEndpointOptions = {},
): Promise<ClusterEndpoint> {
  const client = options.client ?? new EKSClient({ ...awsDeadlines(), ...(options.region === undefined ? {} : { region: options.region }) });
  const operation = 'eks:DescribeCluster';
  let cluster;
  try {
    ({ cluster } = await client.send(new DescribeClusterCommand({ name: clusterName })));
  } catch (error) {
    throw new EksClusterError(clusterName, operation, describeSdkError(error), { cause: error });
  }
  if (cluster === undefined) {
    throw new EksClusterError(clusterName, operation, 'the answer has no cluster');
  }
  const status = cluster.status === undefined ? '' : ` (cluster status ${cluster.status})`;
  const server = cluster.endpoint;
  if (server === undefined || server === '') {
    throw new EksClusterError(clusterName, operation, `the cluster has no API endpoint yet${status}`);
  }
  if (!server.startsWith('https://')) {
    throw new EksClusterError(clusterName, operation, `the API endpoint ${JSON.stringify(server)} is not an https URL`);
  }
  const caData = cluster.certificateAuthority?.data;
  if (caData === undefined || caData === '') {
    throw new EksClusterError(clusterName, operation, `the cluster has no certificate authority data${status}`);
  }
  return { server, caData };
}

/** `Name: message` for SDK exceptions (their name is the AWS error code), the message otherwise. */
export function describeSdkError(error: unknown): string {
  if (error instanceof Error) {
    const name = error.name !== '' && error.name !== 'Error' ? `${error.name}: ` : '';
    return `${name}${error.message}`;
  }
  return String(error);
}
