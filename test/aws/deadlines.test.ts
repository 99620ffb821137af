// Every remote call has a deadline: an endpoint that accepts the connection and never answers makes the
// call fail soon after the deadline, instead of hanging until the Lambda's own timeout.
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DescribeInstancesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { awsDeadlines, AWS_REQUEST_TIMEOUT_MS } from '../../src/adapters/aws/deadlines.ts';
import { kubeConfigFromEndpoint, KUBE_REQUEST_TIMEOUT_MS, makeKubeApis, withRequestDeadline } from '../../src/adapters/kubernetes/kubeClient.ts';
import { KubeNodeOperations } from '../../src/adapters/kubernetes/nodeOperations.ts';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeKubeApi } from '../support/fakeKubeApi.ts';

const sockets: Socket[] = [];
let silent: Server | undefined;
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await new Promise<void>((resolve) => (silent === undefined ? resolve() : silent.close(() => resolve())));
  silent = undefined;
});

/** A TCP server that accepts every connection and never says a word (not even a TLS handshake). */
async function silentServer(): Promise<number> {
  silent = createServer((socket) => {
    sockets.push(socket);
  });
  await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
  return (silent.address() as { port: number }).port;
}

describe('deadlines on remote calls', () => {
  it('an AWS SDK call to an endpoint that never answers fails at its deadline', async () => {
    const port = await silentServer();
    const client = new EC2Client({
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${port}`,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      maxAttempts: 1,
      ...awsDeadlines(300),
    });
    const started = Date.now();
    const error = await client.send(new DescribeInstancesCommand({})).catch((e: unknown) => e);
    expect((error as Error).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeLessThan(10_000);
    client.destroy();
  });

  it('a Kubernetes API call to a server that never answers fails at its deadline, as "no answer"', async () => {
    const port = await silentServer();
    const api = await startFakeKubeApi({ objects: [] });
    try {
      const kc = withRequestDeadline(kubeConfigFromEndpoint({ server: `https://127.0.0.1:${port}`, caData: api.caData, token: api.token }), 300);
      const nodes = new KubeNodeOperations(kc);
      const started = Date.now();
      const error = await nodes.getNode('ip-10-0-0-1.ec2.internal').catch((e: unknown) => e);
      expect((error as Error).message).toMatch(/no answer from the API server/);
      expect(Date.now() - started).toBeLessThan(10_000);
      // The same KubeConfig still reaches a server that answers: the deadline is per request.
      const live = withRequestDeadline(kubeConfigFromEndpoint({ server: api.url, caData: api.caData, token: api.token }), 2_000);
      expect((await makeKubeApis(live).core.listNode()).items).toEqual([]);
    } finally {
      await api.close();
    }
  });

  it('every AWS client the product builds carries the deadlines', () => {
    // A scan of the source: each `new <Service>Client(` is given `awsDeadlines()` directly or the
    // wiring's shared `aws` options, which spread it.
    const files = readdirSync('src', { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const constructions: string[] = [];
    for (const file of files) {
      const text = readFileSync(join('src', file), 'utf8');
      for (const line of text.split('\n')) {
        if (/new (?:EC2|Pricing|EKS|DynamoDB)?Client\(/.test(line) && !line.trim().startsWith('//') && !line.trim().startsWith('*')) constructions.push(`${file}: ${line.trim()}`);
      }
      if (/const aws = \{/.test(text)) expect(text, file).toMatch(/const aws = \{[^}]*\.\.\.awsDeadlines\(\)/);
    }
    expect(constructions.length).toBeGreaterThanOrEqual(6);
    for (const line of constructions) expect(line, line).toMatch(/awsDeadlines\(\)|\(aws\)|\.\.\.aws[,} ]/);
    expect(awsDeadlines()).toEqual({ requestHandler: { connectionTimeout: 5_000, requestTimeout: AWS_REQUEST_TIMEOUT_MS, throwOnRequestTimeout: true } });
    expect(KUBE_REQUEST_TIMEOUT_MS).toBe(30_000);
  });
});
