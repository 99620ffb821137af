// A bearer token for the Kubernetes API of an EKS cluster, made without kubectl or the aws CLI.
//
// EKS accepts the scheme of aws-iam-authenticator: the token is a presigned STS GetCallerIdentity URL.
// The API server does not verify a signature itself; it replays the URL against STS, which answers
// with the caller's ARN, and maps that ARN to Kubernetes identities (access entries or aws-auth).
// The cluster name travels as the signed header `x-k8s-aws-id`, so a token made for one cluster is
// refused by another. EKS accepts a token for 15 minutes after its X-Amz-Date, whatever
// X-Amz-Expires says (the authenticator requires 60 there), so a cached token is replaced after 14.
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { EksClusterError, describeSdkError } from './eksCluster.ts';

/** AWS credentials, as the SDK's credential providers return them. */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** Resolves credentials; called for every new token (SDK providers cache and refresh on their own). */
export type AwsCredentialsProvider = () => Promise<AwsCredentials>;

export const TOKEN_PREFIX = 'k8s-aws-v1.';
/** The header that binds a token to one cluster. */
export const CLUSTER_ID_HEADER = 'x-k8s-aws-id';
/** How long EKS accepts a token after it was signed. */
export const TOKEN_LIFETIME_MS = 15 * 60_000;
/** When a cached token is replaced: one minute of margin for clock skew and slow calls. */
export const TOKEN_REFRESH_AFTER_MS = 14 * 60_000;
/** X-Amz-Expires of the presigned URL; aws-iam-authenticator uses (and EKS expects) 60. */
const PRESIGN_EXPIRES_SECONDS = 60;

export interface EksTokenOptions {
  readonly clusterName: string;
  /** Region of the cluster: the token is signed for that region's STS endpoint. */
  readonly region: string;
  /**
   * Credentials or a provider of them. Default: the SDK's Node.js chain (environment, web identity,
   * SSO, shared files, container and instance metadata), which is what the Lambda's role gives.
   */
  readonly credentials?: AwsCredentials | AwsCredentialsProvider;
  /** The clock, epoch ms. Default: Date.now. */
  readonly now?: () => number;
}

export interface EksToken {
  readonly token: string;
  /** When it was signed (X-Amz-Date), epoch ms. */
  readonly signedAt: number;
  /** When EKS stops accepting it, epoch ms. */
  readonly expiresAt: number;
}

/** The regional STS host the token is presigned for (China partition included). */
export function stsHostname(region: string): string {
  const suffix = region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com';
  return `sts.${region}.${suffix}`;
}

/** Makes one fresh token. Rejects with an EksClusterError when credentials cannot be had or signing fails. */
export async function createEksToken(options: EksTokenOptions): Promise<EksToken> {
  const { clusterName, region } = options;
  const now = options.now ?? Date.now;
  const signedAt = now();
  const hostname = stsHostname(region);
  let presigned;
  try {
    const signer = new SignatureV4({
      service: 'sts',
      region,
      credentials: toProvider(options.credentials),
      sha256: Sha256,
      uriEscapePath: true,
      applyChecksum: false,
    });
    presigned = await signer.presign(
      {
        method: 'GET',
        protocol: 'https:',
        hostname,
        path: '/',
        query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
        headers: { host: hostname, [CLUSTER_ID_HEADER]: clusterName },
      },
      { expiresIn: PRESIGN_EXPIRES_SECONDS, signingDate: new Date(signedAt) },
    );
  } catch (error) {
    throw new EksClusterError(clusterName, 'sts:GetCallerIdentity presign', describeSdkError(error), { cause: error });
  }
  const url = `https://${hostname}/?${encodeQuery(presigned.query ?? {})}`;
  const token = TOKEN_PREFIX + Buffer.from(url, 'utf8').toString('base64url');
  return { token, signedAt, expiresAt: signedAt + TOKEN_LIFETIME_MS };
}

/**
 * Hands out a token, reusing the last one until it is `TOKEN_REFRESH_AFTER_MS` old. Concurrent callers
 * during a refresh share one signing. A failed refresh is not cached: the next call tries again.
 */
export class EksTokenSource {
  private current: EksToken | undefined;
  private pending: Promise<EksToken> | undefined;
  private readonly now: () => number;
  /** Number of tokens signed so far (for tests and metrics). */
  signings = 0;

  constructor(
    private readonly options: EksTokenOptions,
    private readonly refreshAfterMs: number = TOKEN_REFRESH_AFTER_MS,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** The bearer token to send now. */
  async getToken(): Promise<string> {
    return (await this.get()).token;
  }

  /** The current token with its times, refreshed when needed. */
  async get(): Promise<EksToken> {
    const now = this.now();
    const cached = this.current;
    // A clock that went backwards also means the cache cannot be trusted.
    if (cached !== undefined && now >= cached.signedAt && now - cached.signedAt < this.refreshAfterMs) {
      return cached;
    }
    if (this.pending === undefined) {
      this.signings += 1;
      this.pending = createEksToken({ ...this.options, now: this.now }).then(
        (token) => {
          this.current = token;
          this.pending = undefined;
          return token;
        },
        (error: unknown) => {
          this.pending = undefined;
          throw error;
        },
      );
    }
    return this.pending;
  }

  /** Drops the cached token, e.g. after the API server answered 401 with it. */
  invalidate(): void {
    this.current = undefined;
  }
}

/** Decodes a token back to its presigned URL (for diagnostics and tests). */
export function decodeEksToken(token: string): URL {
  if (!token.startsWith(TOKEN_PREFIX)) throw new Error(`not an EKS token: missing prefix ${TOKEN_PREFIX}`);
  return new URL(Buffer.from(token.slice(TOKEN_PREFIX.length), 'base64url').toString('utf8'));
}

function toProvider(credentials: AwsCredentials | AwsCredentialsProvider | undefined): AwsCredentialsProvider {
  if (typeof credentials === 'function') return credentials;
  if (credentials !== undefined) {
    const fixed = credentials;
    return async () => fixed;
  }
  return defaultCredentials();
}

let defaultChain: AwsCredentialsProvider | undefined;

/**
 * The SDK's default Node.js credential chain, loaded on first use (it pulls in SSO/INI/IMDS code that
 * a caller with injected credentials never needs). One memoized chain per process.
 */
function defaultCredentials(): AwsCredentialsProvider {
  return async () => {
    if (defaultChain === undefined) {
      const { defaultProvider } = await import('@aws-sdk/credential-provider-node');
      defaultChain = defaultProvider();
    }
    return defaultChain();
  };
}

/** RFC 3986 query encoding, keys sorted: what SigV4 canonicalises to, so STS sees what was signed. */
function encodeQuery(query: Record<string, string | null | readonly (string | null)[]>): string {
  const pairs: string[] = [];
  for (const key of Object.keys(query).sort()) {
    const value = query[key];
    const values = Array.isArray(value) ? value : [value];
    for (const item of values) {
      pairs.push(item === null || item === undefined ? strictEncode(key) : `${strictEncode(key)}=${strictEncode(item)}`);
    }
  }
  return pairs.join('&');
}

function strictEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
