// What the handler tests share: the demo cluster served by the fake Kubernetes API, EKS/EC2/Pricing
// mocked at the SDK (every client the wiring builds is a mocked one), the state table in real dynalite,
// a Lambda context, and stdout captured: every log and EMF line Powertools writes, kept per test.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { DescribeClusterCommand, EKSClient } from '@aws-sdk/client-eks';
import { EC2Client } from '@aws-sdk/client-ec2';
import { PricingClient } from '@aws-sdk/client-pricing';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { demoClusterPath, demoNodePoolsPath, DEMO_RECORDED_AT } from '../../src/adapters/catalog/bundledPaths.ts';
import { createStateTable } from '../../src/adapters/dynamodb/tableSchema.ts';
import type { Env } from '../../src/app/config.ts';
import type { Actuator, ActuatorFactory } from '../../src/app/wiring.ts';
import type { HandlerDeps } from '../../src/handlers/pass.ts';
import { startDynalite, uniqueTableName, type LocalDynamo } from '../support/dynalite.ts';
import { captureStdout } from '../support/stdout.ts';
import { startFakeKubeApi, type FakeKubeApi } from '../support/fakeKubeApi.ts';

export const CLUSTER = 'demo-cluster';
export const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
/** The demo's own moment: a Saturday, no budget window closed, every consolidateAfter passed. */
export const NOW = DEMO_RECORDED_AT;

export const eksMock = mockClient(EKSClient);
export const ec2Mock = mockClient(EC2Client);
export const pricingMock = mockClient(PricingClient);

/** EC2 commands that change something: none may be sent by a dry run. */
export const MUTATING_EC2 = ['CreateFleetCommand', 'RunInstancesCommand', 'TerminateInstancesCommand', 'CreateTagsCommand'];

export function demoObjects(): unknown[] {
  return (JSON.parse(readFileSync(demoClusterPath, 'utf8')) as { items: unknown[] }).items;
}

export interface Harness {
  readonly kube: FakeKubeApi;
  readonly db: LocalDynamo;
  readonly lines: string[];
  table: string;
  close(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  // EKS accepts any well-formed EKS token here; the fake checks its shape.
  const kube = await startFakeKubeApi({ objects: demoObjects(), authorize: (token) => token?.startsWith('k8s-aws-v1.') === true });
  const db = await startDynalite();
  const lines: string[] = [];
  const release = captureStdout(lines);
  return {
    kube,
    db,
    lines,
    table: '',
    close: async () => {
      release();
      await kube.close();
      await db.stop();
    },
  };
}

/** A fresh table per test, the mocks reset: EKS answers with the fake API, EC2 and Pricing are down. */
export async function resetWorld(h: Harness): Promise<void> {
  eksMock.reset();
  ec2Mock.reset();
  pricingMock.reset();
  eksMock.on(DescribeClusterCommand).resolves({
    cluster: { name: CLUSTER, status: 'ACTIVE', endpoint: h.kube.url, certificateAuthority: { data: h.kube.caData } },
  });
  // The live catalog cannot be fetched: the pass falls back to the bundled one (and says so).
  ec2Mock.onAnyCommand().rejects(Object.assign(new Error('EC2 is not reachable from tests'), { name: 'TimeoutError' }));
  pricingMock.onAnyCommand().rejects(Object.assign(new Error('Pricing is not reachable from tests'), { name: 'TimeoutError' }));
  h.lines.length = 0;
  h.kube.requests.length = 0;
  h.table = uniqueTableName('handler');
  await createStateTable(h.db.client, h.table);
}

export function env(h: Harness, extra: Env = {}): Env {
  return {
    CLUSTER_NAME: CLUSTER,
    AWS_REGION: 'us-east-1',
    TABLE_NAME: h.table,
    DYNAMODB_ENDPOINT: h.db.endpoint,
    NODEPOOLS_SOURCE: `file:${demoNodePoolsPath}`,
    // The demo is a Karpenter cluster: a real run would leave its pools to Karpenter (coexistence.ts).
    // Most handler tests are about acting itself; the coexistence tests set KARPENTER=auto.
    KARPENTER: 'absent',
    ...extra,
  };
}

export function deps(h: Harness, extra: Env = {}, options: { actuator?: ActuatorFactory; clock?: () => number } = {}): HandlerDeps {
  return {
    env: env(h, extra),
    clock: options.clock ?? (() => NOW),
    overrides: { credentials, ...(options.actuator ? { actuator: options.actuator } : {}) },
  };
}

export function lambdaContext(remainingMs = 300_000): Context {
  const requestId = randomUUID();
  return {
    awsRequestId: requestId,
    functionName: 'eks-consolidator-test-consolidate',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:eks-consolidator-test-consolidate',
    memoryLimitInMB: '1024',
    logGroupName: '/aws/lambda/eks-consolidator-test-consolidate',
    logStreamName: '2026/11/21/[$LATEST]test',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => remainingMs,
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

export const scheduledEvent: ScheduledEvent = {
  version: '0',
  id: randomUUID(),
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: new Date(NOW).toISOString(),
  region: 'us-east-1',
  resources: ['arn:aws:events:us-east-1:123456789012:rule/eks-consolidator-consolidate'],
  detail: {},
};

/** Every item in the table (a dry run must leave none). */
export async function scanTable(h: Harness): Promise<Record<string, unknown>[]> {
  const doc = DynamoDBDocumentClient.from(h.db.client);
  const { Items } = await doc.send(new ScanCommand({ TableName: h.table, ConsistentRead: true }));
  return Items ?? [];
}

export function mutatingEc2Calls(): string[] {
  return ec2Mock
    .calls()
    .map((call) => (call.args[0] as { constructor: { name: string } }).constructor.name)
    .filter((name) => MUTATING_EC2.includes(name));
}

/** An actuator that records the calls and carries nothing out. */
export function recordingActuator(calls: unknown[] = []): { factory: ActuatorFactory; calls: unknown[] } {
  const actuator: Actuator = {
    begin: (context) => ({
      resume: async () => {},
      act: async (result) => {
        calls.push({ decisions: result?.plan.decisions.length, owner: context.owner, deadlineMs: context.deadlineMs });
      },
      report: () => ({ carriedOut: 0 }),
    }),
  };
  return { factory: () => actuator, calls };
}

export function jsonLines(lines: readonly string[]): Record<string, unknown>[] {
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}
