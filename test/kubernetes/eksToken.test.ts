import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EksClusterError } from '../../src/adapters/kubernetes/eksCluster.ts';
import {
  EksTokenSource,
  TOKEN_PREFIX,
  createEksToken,
  decodeEksToken,
  stsHostname,
} from '../../src/adapters/kubernetes/eksToken.ts';

const T0 = Date.parse('2026-11-21T12:00:00Z');
const credentials = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  sessionToken: 'IQoJb3JpZ2luX2VjE/session+token==',
};

/** SigV4 of the presigned URL, computed here from the spec, independently of @smithy/signature-v4. */
function expectedSignature(url: URL, clusterName: string, secret: string): string {
  const params = [...url.searchParams.entries()].filter(([k]) => k !== 'X-Amz-Signature');
  const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const canonicalQuery = params
    .map(([k, v]) => [enc(k), enc(v)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonicalRequest = [
    'GET',
    '/',
    canonicalQuery,
    `host:${url.hostname}\nx-k8s-aws-id:${clusterName}\n`,
    'host;x-k8s-aws-id',
    createHash('sha256').update('').digest('hex'),
  ].join('\n');
  const date = url.searchParams.get('X-Amz-Date') ?? '';
  const scope = `${date.slice(0, 8)}/us-east-1/sts/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', date, scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
  const kDate = hmac(`AWS4${secret}`, date.slice(0, 8));
  const kSigning = hmac(hmac(hmac(kDate, 'us-east-1'), 'sts'), 'aws4_request');
  return createHmac('sha256', kSigning).update(stringToSign).digest('hex');
}

describe('EKS token', () => {
  it('is k8s-aws-v1. + unpadded base64url of a presigned regional STS GetCallerIdentity URL', async () => {
    const { token, signedAt, expiresAt } = await createEksToken({
      clusterName: 'prod-east',
      region: 'us-east-1',
      credentials,
      now: () => T0,
    });
    expect(token.startsWith(TOKEN_PREFIX)).toBe(true);
    expect(token.slice(TOKEN_PREFIX.length)).toMatch(/^[A-Za-z0-9_-]+$/); // base64url, no '=' padding
    expect(signedAt).toBe(T0);
    expect(expiresAt).toBe(T0 + 15 * 60_000);

    const url = decodeEksToken(token);
    expect(url.protocol).toBe('https:');
    expect(url.hostname).toBe('sts.us-east-1.amazonaws.com');
    expect(url.pathname).toBe('/');
    const q = url.searchParams;
    expect(q.get('Action')).toBe('GetCallerIdentity');
    expect(q.get('Version')).toBe('2011-06-15');
    expect(q.get('X-Amz-Expires')).toBe('60');
    expect(q.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(q.get('X-Amz-Date')).toBe('20261121T120000Z');
    expect(q.get('X-Amz-Credential')).toBe('AKIAIOSFODNN7EXAMPLE/20261121/us-east-1/sts/aws4_request');
    expect(q.get('X-Amz-Security-Token')).toBe(credentials.sessionToken);
    expect(q.get('X-Amz-SignedHeaders')?.split(';')).toEqual(expect.arrayContaining(['host', 'x-k8s-aws-id']));
    // The cluster id stays a header (signed), it is not hoisted into the query.
    expect(q.has('x-k8s-aws-id')).toBe(false);
    expect(q.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('carries a correct SigV4 signature over host and x-k8s-aws-id', async () => {
    const { token } = await createEksToken({ clusterName: 'prod-east', region: 'us-east-1', credentials, now: () => T0 });
    const url = decodeEksToken(token);
    expect(url.searchParams.get('X-Amz-Signature')).toBe(expectedSignature(url, 'prod-east', credentials.secretAccessKey));
  });

  it('binds the token to the cluster and is deterministic for a given clock', async () => {
    const a = await createEksToken({ clusterName: 'a', region: 'us-east-1', credentials, now: () => T0 });
    const a2 = await createEksToken({ clusterName: 'a', region: 'us-east-1', credentials, now: () => T0 });
    const b = await createEksToken({ clusterName: 'b', region: 'us-east-1', credentials, now: () => T0 });
    expect(a2.token).toBe(a.token);
    expect(b.token).not.toBe(a.token);
  });

  it('uses the regional endpoint of the cluster region (China partition included)', () => {
    expect(stsHostname('eu-west-1')).toBe('sts.eu-west-1.amazonaws.com');
    expect(stsHostname('cn-north-1')).toBe('sts.cn-north-1.amazonaws.com.cn');
  });

  it('works with credentials without a session token', async () => {
    const { token } = await createEksToken({
      clusterName: 'c',
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' },
      now: () => T0,
    });
    const url = decodeEksToken(token);
    expect(url.hostname).toBe('sts.eu-west-1.amazonaws.com');
    expect(url.searchParams.has('X-Amz-Security-Token')).toBe(false);
  });

  it('turns a credentials failure into an EksClusterError naming the cluster', async () => {
    const failing = async () => {
      throw Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' });
    };
    const attempt = createEksToken({ clusterName: 'prod-east', region: 'us-east-1', credentials: failing, now: () => T0 });
    await expect(attempt).rejects.toBeInstanceOf(EksClusterError);
    await expect(attempt).rejects.toThrow(/prod-east.*CredentialsProviderError: Could not load credentials/);
  });
});

describe('EksTokenSource', () => {
  function source(initial = T0) {
    let now = initial;
    let credentialCalls = 0;
    const tokens = new EksTokenSource({
      clusterName: 'prod-east',
      region: 'us-east-1',
      credentials: async () => {
        credentialCalls += 1;
        return credentials;
      },
      now: () => now,
    });
    return {
      tokens,
      advance: (ms: number) => {
        now += ms;
      },
      credentialCalls: () => credentialCalls,
    };
  }

  it('reuses the token until it is 14 minutes old, then signs a new one', async () => {
    const { tokens, advance } = source();
    const first = await tokens.getToken();
    advance(14 * 60_000 - 1);
    expect(await tokens.getToken()).toBe(first);
    expect(tokens.signings).toBe(1);
    advance(1);
    const second = await tokens.getToken();
    expect(second).not.toBe(first);
    expect(tokens.signings).toBe(2);
    expect(decodeEksToken(second).searchParams.get('X-Amz-Date')).toBe('20261121T121400Z');
    advance(60_000);
    expect(await tokens.getToken()).toBe(second);
  });

  it('shares one signing between concurrent callers', async () => {
    const { tokens, credentialCalls } = source();
    const all = await Promise.all([tokens.getToken(), tokens.getToken(), tokens.getToken()]);
    expect(new Set(all).size).toBe(1);
    expect(tokens.signings).toBe(1);
    expect(credentialCalls()).toBe(1);
  });

  it('refreshes when the clock goes backwards and after invalidate()', async () => {
    const { tokens, advance } = source();
    await tokens.getToken();
    advance(-1000);
    await tokens.getToken();
    expect(tokens.signings).toBe(2);
    tokens.invalidate();
    await tokens.getToken();
    expect(tokens.signings).toBe(3);
  });

  it('does not cache a failure', async () => {
    let fail = true;
    const tokens = new EksTokenSource({
      clusterName: 'prod-east',
      region: 'us-east-1',
      credentials: async () => {
        if (fail) throw new Error('metadata service timed out');
        return credentials;
      },
      now: () => T0,
    });
    await expect(tokens.getToken()).rejects.toThrow(/prod-east.*metadata service timed out/);
    fail = false;
    expect(await tokens.getToken()).toMatch(/^k8s-aws-v1\./);
  });
});
