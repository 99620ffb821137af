// A world for executor tests: the real KubeWriter (through KubeNodeOperations) against the fake
// Kubernetes API on loopback, EC2 mocked with aws-sdk-client-mock behind a small stateful fake (so
// idempotency can be observed: instances found by tag, ClientToken replays, terminate twice), the real
// DynamoStateStore on dynalite, and a fake clock that `sleep` advances.
import {
  CreateFleetCommand,
  DescribeInstancesCommand,
  DescribeLaunchTemplatesCommand,
  DescribeLaunchTemplateVersionsCommand,
  DescribeSubnetsCommand,
  EC2Client,
  TerminateInstancesCommand,
  type CreateFleetCommandInput,
  type Filter,
  type Instance,
} from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { Ec2InstanceLauncher } from '../../src/adapters/aws/ec2Launcher.ts';
import { DynamoStateStore } from '../../src/adapters/dynamodb/dynamoStateStore.ts';
import { createStateTable } from '../../src/adapters/dynamodb/tableSchema.ts';
import { kubeConfigFromEndpoint } from '../../src/adapters/kubernetes/kubeClient.ts';
import { KubeNodeOperations } from '../../src/adapters/kubernetes/nodeOperations.ts';
import { LiveClusterSource } from '../../src/adapters/kubernetes/liveClusterSource.ts';
import { bundledCatalogPath } from '../../src/adapters/catalog/bundledPaths.ts';
import { readCatalogFile } from '../../src/adapters/files/index.ts';
import type { Catalog, Cluster } from '../../src/core/model/types.ts';
import { makeActor, recordActionInStore, type ActDeps, type ActOptions, type ExecutionReport } from '../../src/app/act/executeCommands.ts';
import { runPass, type PassResult } from '../../src/app/runPass.ts';
import type { ActuatorSetting } from '../../src/core/disruption/actuatorChoice.ts';
import type { KarpenterPresence } from '../../src/core/disruption/coexistence.ts';
import { defaultNodePool } from '../../src/core/input/nodePools.ts';
import type { NodePool } from '../../src/core/model/types.ts';
import type { Decision } from '../../src/core/plan.ts';
import type { StateStore } from '../../src/core/state/ports.ts';
import { emptyPassState, type DisruptionCommand } from '../../src/core/state/types.ts';
import { KarpenterTerminationFinalizer, kubeNode, startFakeKubeApi, type FakeKubeApi } from '../support/fakeKubeApi.ts';
import { attachKarpenter, type FakeKarpenter, type FakeKarpenterOptions } from '../support/fakeKarpenter.ts';
import { KubeNodeClaims } from '../../src/adapters/kubernetes/nodeClaims.ts';
import type { PoolActuator } from '../../src/core/plan.ts';
import { startDynalite, uniqueTableName, type LocalDynamo } from '../support/dynalite.ts';
import { afterAll, afterEach, beforeAll } from 'vitest';

export const T0 = Date.parse('2026-11-21T12:00:00Z');

let bundled: Promise<Catalog> | undefined;
/** The bundled catalog, read once per test file. */
export function catalog(): Promise<Catalog> {
  bundled ??= readCatalogFile(bundledCatalogPath);
  return bundled;
}

export const POOL: NodePool = {
  ...defaultNodePool(),
  launch: {
    'eks-consolidator/launch-template': 'lt-0abc123',
    'eks-consolidator/subnets': 'subnet-a, subnet-b',
  },
};

/** The same pool as Karpenter serves it: a NodeClaim template, no launch settings. */
export const KARPENTER_POOL: NodePool = {
  ...defaultNodePool(),
  templateLabels: { team: 'web' },
  nodeClaimTemplate: {
    nodePoolUid: 'uid-nodepool-default',
    annotations: { 'example.com/owner': 'platform' },
    hashAnnotations: { 'karpenter.sh/nodepool-hash': '1234567890', 'karpenter.sh/nodepool-hash-version': 'v3' },
    startupTaints: [{ key: 'example.com/agent-not-ready', effect: 'NoSchedule' }],
    nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
    expireAfter: '720h',
    terminationGracePeriod: '48h',
    requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
  },
};

/** Labels Karpenter puts on the nodes it registered. */
export const KARPENTER_NODE_LABELS = { 'karpenter.sh/registered': 'true', 'karpenter.sh/initialized': 'true', team: 'web' };

export const KARPENTER_ACTUATORS: Readonly<Record<string, PoolActuator>> = { default: { actuator: 'karpenter', why: 'Karpenter serves NodePool "default"' } };

/** A pass result whose plan acts on the pool through Karpenter. */
export function karpenterPassResult(decisions: readonly Decision[]): PassResult {
  const base = passResult(decisions);
  return { ...base, plan: { ...base.plan, actuators: KARPENTER_ACTUATORS }, nodePools: [KARPENTER_POOL] };
}

/** The NodeClaim Karpenter would hold for an existing node: launched, registered, initialized, bound to it. */
export function nodeClaimFor(node: Record<string, unknown>): Record<string, unknown> {
  const meta = node['metadata'] as { name: string; labels?: Record<string, string> };
  const spec = node['spec'] as { providerID: string };
  const condition = (type: string) => ({ type, status: 'True', reason: type, message: '', lastTransitionTime: '2026-11-21T09:00:00Z' });
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: `default-${meta.name.split('.')[0]!.replace(/[^a-z0-9]/g, '')}`,
      labels: { 'karpenter.sh/nodepool': meta.labels?.['karpenter.sh/nodepool'] ?? 'default' },
      finalizers: [KarpenterTerminationFinalizer],
      creationTimestamp: '2026-11-21T08:59:00Z',
    },
    spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] },
    status: {
      providerID: spec.providerID,
      nodeName: meta.name,
      conditions: [condition('Launched'), condition('Registered'), condition('Initialized'), condition('Ready')],
    },
  };
}

/** Options that keep tests short: 10 s polls, a 30 s margin. */
export const FAST: ActOptions = { pollIntervalMs: 10_000, marginMs: 30_000, replacementReadyTimeoutMs: 10 * 60_000, maxWaitMs: 60 * 60_000 };

/** The instance id the fake API's `kubeNode` puts in a node's providerID. */
export function instanceIdOf(nodeName: string): string {
  const providerId = ((kubeNode(nodeName)['spec'] as Record<string, unknown>)['providerID'] as string) ?? '';
  return providerId.slice(providerId.lastIndexOf('/') + 1);
}

export function replaceDecision(nodes: readonly string[], overrides: Partial<Decision> = {}): Decision {
  return {
    method: nodes.length > 1 ? 'multi-node' : 'single-node',
    reason: 'Underutilized',
    action: 'replace',
    nodes,
    replacements: [
      {
        instanceTypes: ['m5.large', 'm5a.large'],
        capacityType: 'on-demand',
        zones: ['us-east-1a'],
        pricePerHour: 0.086,
        nodePool: POOL.name,
        worstPricePerHour: 0.096,
      },
    ],
    currentPricePerHour: 0.192 * nodes.length,
    replacementPricePerHour: 0.086,
    savingsPerHour: 0.1,
    disruptionCost: 1,
    evictedPods: [],
    ...overrides,
  };
}

export function deleteDecision(nodes: readonly string[], method: Decision['method'] = 'emptiness'): Decision {
  return {
    method,
    reason: method === 'emptiness' ? 'Empty' : 'Underutilized',
    action: 'delete',
    nodes,
    replacements: [],
    currentPricePerHour: 0.096,
    replacementPricePerHour: 0,
    savingsPerHour: 0.096,
    disruptionCost: 0,
    evictedPods: [],
  };
}

export function passResult(decisions: readonly Decision[]): PassResult {
  return {
    plan: { dryRun: false, evaluatedAt: '2026-11-21T12:00:00Z', decisions, nodes: [] },
    leaseAcquired: true,
    state: emptyPassState(),
    nodePools: [POOL],
  };
}

// ---------------------------------------------------------------------------------------------------
// EC2

interface FakeInstance {
  readonly id: string;
  state: string;
  readonly tags: Record<string, string>;
  readonly type: string;
  readonly zone: string;
  readonly launchTime: Date;
  /** Eventual consistency: DescribeInstances and TerminateInstances do not know it before this time (fake clock). */
  readonly visibleAt?: number;
}

/**
 * A fault `FakeEc2.fault` injects into one call: the error is thrown before the call has any effect, or
 * (`after`) once it has had its effect (the answer lost, e.g. a client timeout).
 */
export interface Ec2Fault {
  readonly error: Error;
  readonly after?: boolean;
}

const notFound = (id: string): Error =>
  Object.assign(new Error(`The instance ID '${id}' does not exist`), { name: 'InvalidInstanceID.NotFound' });

/** A launch template as the fake knows it: its own tags and its TagSpecifications (per resource type). */
export interface FakeLaunchTemplate {
  readonly id: string;
  readonly name: string;
  readonly tags: Record<string, string>;
  readonly tagSpecifications: Record<string, Record<string, string>>;
}

/** EC2 as far as the launcher uses it, with state, behind aws-sdk-client-mock. */
export class FakeEc2 {
  readonly mock = mockClient(EC2Client);
  readonly client = new EC2Client({ region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  readonly instances = new Map<string, FakeInstance>();
  readonly fleetRequests: CreateFleetCommandInput[] = [];
  readonly terminateCalls: string[] = [];
  /** When set, CreateFleet launches nothing and answers these errors. */
  fleetErrors: { ErrorCode: string; ErrorMessage: string }[] | undefined;
  /** Called with each new instance (e.g. to register its node in the fake Kubernetes API). */
  onLaunch: ((instanceId: string) => void) | undefined;
  /** Called before each instance is terminated (the world checks what is still bound to it). */
  onTerminate: ((instanceId: string) => void) | undefined;
  /** The clock of launch times and of `describeLagMs`. Default: every launch at T0, no lag. */
  clock: (() => number) | undefined;
  /**
   * Eventual consistency: for this long after its launch (on `clock`), an instance is unknown to
   * DescribeInstances (by id: InvalidInstanceID.NotFound; by filter: not listed) and to TerminateInstances.
   */
  describeLagMs = 0;
  /** Decides, per call (the command's name, e.g. `CreateFleetCommand`, and its input), a fault to inject. */
  fault: ((command: string, input: unknown) => Ec2Fault | undefined) | undefined;
  /**
   * Launch templates by id and by name. One not listed here is answered as a well-formed template of
   * `clusterName` (tagged as the IAM policy wants), so tests that are not about templates need none.
   */
  readonly launchTemplates = new Map<string, FakeLaunchTemplate>();
  readonly clusterName: string;
  private readonly byToken = new Map<string, string>();
  private seq = 0;

  constructor(options: { clusterName?: string } = {}) {
    this.clusterName = options.clusterName ?? 'test';
    const template = (key: string): FakeLaunchTemplate | undefined => {
      const listed = this.launchTemplates.get(key) ?? [...this.launchTemplates.values()].find((t) => t.id === key || t.name === key);
      if (listed !== undefined || this.launchTemplates.size > 0) return listed;
      const clusterTag = { [`kubernetes.io/cluster/${this.clusterName}`]: 'owned' };
      return {
        id: key.startsWith('lt-') ? key : 'lt-0fromname',
        name: key.startsWith('lt-') ? 'nodes' : key,
        tags: clusterTag,
        tagSpecifications: { 'network-interface': clusterTag, 'spot-instances-request': clusterTag },
      };
    };
    const sdkTags = (tags: Record<string, string>) => Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));
    this.mock.on(DescribeLaunchTemplatesCommand).callsFake(async (input: { LaunchTemplateIds?: string[]; LaunchTemplateNames?: string[] }) => {
      await this.faulty('DescribeLaunchTemplatesCommand', input, () => undefined);
      const key = input.LaunchTemplateIds?.[0] ?? input.LaunchTemplateNames?.[0] ?? '';
      const found = template(key);
      if (found === undefined) {
        throw Object.assign(new Error(`The specified launch template, with template ${key}, does not exist.`), {
          name: key.startsWith('lt-') ? 'InvalidLaunchTemplateId.NotFound' : 'InvalidLaunchTemplateName.NotFoundException',
        });
      }
      return { LaunchTemplates: [{ LaunchTemplateId: found.id, LaunchTemplateName: found.name, Tags: sdkTags(found.tags) }] };
    });
    this.mock.on(DescribeLaunchTemplateVersionsCommand).callsFake(async (input: { LaunchTemplateId?: string; Versions?: string[] }) => {
      const found = template(input.LaunchTemplateId ?? '');
      return {
        LaunchTemplateVersions:
          found === undefined
            ? []
            : [
                {
                  LaunchTemplateId: found.id,
                  VersionNumber: 1,
                  LaunchTemplateData: {
                    TagSpecifications: Object.entries(found.tagSpecifications).map(([ResourceType, tags]) => ({ ResourceType, Tags: sdkTags(tags) })),
                  },
                },
              ],
      };
    });
    this.mock.on(DescribeSubnetsCommand).callsFake(async (input: { SubnetIds?: string[] }) =>
      this.faulty('DescribeSubnetsCommand', input, () => ({
        Subnets: (input.SubnetIds ?? []).map((id) => ({ SubnetId: id, AvailabilityZone: id === 'subnet-a' ? 'us-east-1a' : 'us-east-1b' })),
      })),
    );
    this.mock.on(DescribeInstancesCommand).callsFake(async (input: { InstanceIds?: string[]; Filters?: Filter[] }) =>
      this.faulty('DescribeInstancesCommand', input, () => {
        let found: FakeInstance[];
        if (input.InstanceIds !== undefined) {
          found = input.InstanceIds.map((id) => {
            const instance = this.instances.get(id);
            if (instance === undefined || !this.visible(instance)) throw notFound(id);
            return instance;
          });
        } else {
          found = [...this.instances.values()].filter((i) => this.visible(i) && (input.Filters ?? []).every((f) => matchesFilter(i, f)));
        }
        return { Reservations: found.length === 0 ? [] : [{ Instances: found.map(toSdk) }] };
      }),
    );
    this.mock.on(CreateFleetCommand).callsFake(async (input: CreateFleetCommandInput) => this.faulty('CreateFleetCommand', input, () => this.createFleet(input)));
    this.mock.on(TerminateInstancesCommand).callsFake(async (input: { InstanceIds?: string[] }) => this.faulty('TerminateInstancesCommand', input, () => this.terminateInstances(input)));
  }

  private createFleet(input: CreateFleetCommandInput) {
    this.fleetRequests.push(input);
    const replay = input.ClientToken === undefined ? undefined : this.byToken.get(input.ClientToken);
    if (replay !== undefined) return fleetAnswer(this.instances.get(replay)!);
    if (this.fleetErrors !== undefined) {
      return {
        Instances: [],
        Errors: this.fleetErrors.map((e) => ({ ...e, Lifecycle: 'on-demand', LaunchTemplateAndOverrides: { Overrides: { InstanceType: 'm5.large' } } })),
      };
    }
    const override = input.LaunchTemplateConfigs?.[0]?.Overrides?.[0];
    const tags = Object.fromEntries((input.TagSpecifications?.[0]?.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
    this.seq += 1;
    const instance: FakeInstance = {
      id: `i-0replacement${String(this.seq).padStart(5, '0')}`,
      state: 'pending',
      tags,
      type: String(override?.InstanceType ?? 'm5.large'),
      zone: override?.SubnetId === 'subnet-b' ? 'us-east-1b' : 'us-east-1a',
      launchTime: new Date(this.clock?.() ?? T0),
      ...(this.clock === undefined || this.describeLagMs <= 0 ? {} : { visibleAt: this.clock() + this.describeLagMs }),
    };
    this.instances.set(instance.id, instance);
    if (input.ClientToken !== undefined) this.byToken.set(input.ClientToken, instance.id);
    this.onLaunch?.(instance.id);
    return fleetAnswer(instance);
  }

  private terminateInstances(input: { InstanceIds?: string[] }) {
    const changes = (input.InstanceIds ?? []).map((id) => {
      const instance = this.instances.get(id);
      if (instance === undefined || !this.visible(instance)) throw notFound(id);
      this.terminateCalls.push(id);
      this.onTerminate?.(id);
      const previous = instance.state;
      instance.state = 'shutting-down';
      return { InstanceId: id, PreviousState: { Name: previous }, CurrentState: { Name: 'shutting-down' } };
    });
    return { TerminatingInstances: changes };
  }

  /** Whether EC2's reads already know the instance (eventual consistency, `describeLagMs`). */
  visible(instance: FakeInstance): boolean {
    return instance.visibleAt === undefined || this.clock === undefined || this.clock() >= instance.visibleAt;
  }

  private async faulty<T>(command: string, input: unknown, call: () => T): Promise<T> {
    const fault = this.fault?.(command, input);
    if (fault !== undefined && fault.after !== true) throw fault.error;
    const result = call();
    if (fault !== undefined) throw fault.error;
    return result;
  }

  /** An instance Karpenter launched for an existing node (none of our tags). */
  addExisting(instanceId: string, zone = 'us-east-1a'): void {
    this.instances.set(instanceId, {
      id: instanceId,
      state: 'running',
      tags: { 'karpenter.sh/nodepool': 'default' },
      type: 'm5.large',
      zone,
      launchTime: new Date(T0 - 3_600_000),
    });
  }

  launched(): FakeInstance[] {
    return [...this.instances.values()].filter((i) => i.tags['eks-consolidator/managed'] === 'true');
  }

  restore(): void {
    this.mock.restore();
    this.client.destroy();
  }
}

function matchesFilter(instance: FakeInstance, filter: Filter): boolean {
  const values = filter.Values ?? [];
  if (filter.Name === 'instance-state-name') return values.includes(instance.state);
  if (filter.Name?.startsWith('tag:')) return values.includes(instance.tags[filter.Name.slice(4)] ?? '\u0000');
  return true;
}

function toSdk(i: FakeInstance): Instance {
  return {
    InstanceId: i.id,
    InstanceType: i.type as Instance['InstanceType'],
    State: { Name: i.state as NonNullable<Instance['State']>['Name'] },
    Tags: Object.entries(i.tags).map(([Key, Value]) => ({ Key, Value })),
    Placement: { AvailabilityZone: i.zone },
    LaunchTime: i.launchTime,
  };
}

function fleetAnswer(i: FakeInstance) {
  return {
    FleetId: 'fleet-0abc',
    Errors: [],
    Instances: [
      {
        InstanceIds: [i.id],
        InstanceType: i.type as Instance['InstanceType'],
        Lifecycle: 'on-demand' as const,
        LaunchTemplateAndOverrides: { Overrides: { InstanceType: i.type as Instance['InstanceType'], SubnetId: i.zone === 'us-east-1b' ? 'subnet-b' : 'subnet-a' } },
      },
    ],
  };
}

// ---------------------------------------------------------------------------------------------------
// The world

export interface Clock {
  nowMs: number;
}

export interface World {
  readonly api: FakeKubeApi;
  /** Karpenter's stand-in, when the world runs one. */
  readonly karpenter?: FakeKarpenter;
  readonly ec2: FakeEc2;
  readonly store: DynamoStateStore;
  /** The state table and a client for it (tests that write raw items). */
  readonly tableName: string;
  readonly dbClient: LocalDynamo['client'];
  readonly clock: Clock;
  /** The NodePool the world acts on (what `deps().loadNodePools` and `readWorld` answer). */
  readonly pool: NodePool;
  /** Times `onAction` was told about. */
  readonly actions: number[];
  /** Pods that counted (workload pods) still bound to an instance's node when it was terminated: must stay empty. */
  readonly terminatedWithPods: { instanceId: string; pods: string[] }[];
  /** Deps for one invocation with `budgetMs` of Lambda time; `store` may be swapped (crash tests). */
  deps(budgetMs: number, overrides?: Partial<ActDeps>): ActDeps;
  /** The cluster as the pass would read it now. */
  cluster(): Promise<Cluster>;
  /** Registers the node of a launched instance in the fake Kubernetes API. */
  registerNode(instanceId: string, name: string, ready: boolean): void;
  commands(): Promise<DisruptionCommand[]>;
  close(): Promise<void>;
}

/**
 * An idle node every world has unless told otherwise: the pods a delete moves need somewhere to go, or
 * the proof before the first eviction (rightly) rolls the command back.
 */
export const SPARE = 'ip-10-7-7-7.ec2.internal';

export interface WorldOptions {
  /** Add the idle SPARE node (default true). */
  readonly spare?: boolean;
  /**
   * Run Karpenter's stand-in (test/support/fakeKarpenter.ts) with these settings: every Node given
   * gets a NodeClaim bound to it, the pool acts through NodeClaims, SPARE included.
   */
  readonly karpenter?: Omit<FakeKarpenterOptions, 'now'>;
  /** The NodePool the world acts on. Default POOL (ec2), KARPENTER_POOL (with `karpenter`). */
  readonly pool?: NodePool;
}

export async function startWorld(db: LocalDynamo, given: readonly unknown[], options: WorldOptions = {}): Promise<World> {
  const objects = options.spare === false ? given : [...given, kubeNode(SPARE, { cpu: '8', memory: '32Gi', ...(options.karpenter ? { labels: KARPENTER_NODE_LABELS } : {}) })];
  const api = await startFakeKubeApi({ objects, ...(options.karpenter ? { karpenterCrds: true } : {}) });
  const ec2 = new FakeEc2();
  for (const object of objects) {
    const o = object as { kind?: string; metadata?: { name?: string }; spec?: { providerID?: string } };
    if (o.kind === 'Node' && o.spec?.providerID) ec2.addExisting(o.spec.providerID.slice(o.spec.providerID.lastIndexOf('/') + 1));
  }
  const tableName = uniqueTableName('act');
  await createStateTable(db.client, tableName);
  const clock: Clock = { nowMs: T0 };
  let karpenter: FakeKarpenter | undefined;
  if (options.karpenter !== undefined) {
    for (const object of objects) {
      const o = object as { kind?: string };
      if (o.kind === 'Node') api.store.put(nodeClaimFor(object as Record<string, unknown>));
    }
    karpenter = attachKarpenter(api, { ...options.karpenter, now: () => clock.nowMs });
  }
  const store = new DynamoStateStore({ client: db.client, tableName, clusterName: 'test', clock: () => clock.nowMs });
  const nodes = new KubeNodeOperations(kubeConfigFromEndpoint({ server: api.url, caData: api.caData, token: api.token }), {
    now: () => clock.nowMs,
  });
  const launcher = new Ec2InstanceLauncher({ client: ec2.client, clusterName: 'test' });
  const kubeConfig = kubeConfigFromEndpoint({ server: api.url, caData: api.caData, token: api.token });
  const live = new LiveClusterSource(kubeConfig);
  const nodeClaims = new KubeNodeClaims(kubeConfig);
  const pool = options.pool ?? (options.karpenter === undefined ? POOL : KARPENTER_POOL);
  const actions: number[] = [];
  const terminatedWithPods: { instanceId: string; pods: string[] }[] = [];
  ec2.onTerminate = (instanceId) => {
    const nodeNames = api.store
      .list('Node')
      .filter((n) => String((n['spec'] as Record<string, unknown> | undefined)?.['providerID'] ?? '').endsWith(`/${instanceId}`))
      .map((n) => String((n['metadata'] as Record<string, unknown>)['name']));
    const pods = api.store.list('Pod').filter((p) => {
      const spec = (p['spec'] ?? {}) as Record<string, unknown>;
      const meta = (p['metadata'] ?? {}) as Record<string, unknown>;
      const phase = String(((p['status'] ?? {}) as Record<string, unknown>)['phase'] ?? 'Running');
      const owners = (meta['ownerReferences'] ?? []) as { kind: string }[];
      const mirror = 'kubernetes.io/config.mirror' in ((meta['annotations'] ?? {}) as object);
      return nodeNames.includes(String(spec['nodeName'])) && phase !== 'Succeeded' && phase !== 'Failed' && !mirror && !owners.some((o) => o.kind === 'DaemonSet');
    });
    if (pods.length > 0) terminatedWithPods.push({ instanceId, pods: pods.map((p) => String((p['metadata'] as Record<string, unknown>)['name'])) });
  };
  let ids = 0;
  return {
    api,
    ec2,
    ...(karpenter === undefined ? {} : { karpenter }),
    store,
    tableName,
    dbClient: db.client,
    clock,
    pool,
    actions,
    terminatedWithPods,
    deps(budgetMs, overrides = {}) {
      const deadline = clock.nowMs + budgetMs;
      return {
        store,
        nodes,
        instances: launcher,
        now: () => clock.nowMs,
        remainingMs: () => deadline - clock.nowMs,
        sleep: async (ms) => {
          clock.nowMs += ms;
        },
        onAction: async (t) => {
          actions.push(t);
        },
        loadNodePools: async () => [pool],
        readWorld: async () => ({ cluster: await live.read(), nodePools: [pool], catalog: await catalog() }),
        ...(options.karpenter === undefined ? {} : { nodeClaims }),
        newCommandId: () => `cmd-${++ids}`,
        ...overrides,
      };
    },
    registerNode(instanceId, name, ready) {
      api.store.put({ ...kubeNode(name, { ready, createdAt: new Date(clock.nowMs).toISOString() }), spec: { providerID: `aws:///us-east-1a/${instanceId}` } });
    },
    commands: () => store.listCommands(clock.nowMs),
    cluster: () => live.read(),
    close: async () => {
      ec2.restore();
      await api.close();
    },
  };
}

/**
 * One dynalite for the test file and at most one world per test, closed after it: registers the
 * vitest hooks, so a file calls it once at its top level.
 */
export function useWorlds(): { start(objects: readonly unknown[], options?: WorldOptions): Promise<World> } {
  let db: LocalDynamo | undefined;
  let world: World | undefined;
  beforeAll(async () => {
    db = await startDynalite();
  });
  afterAll(async () => {
    await db?.stop();
  });
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });
  return {
    async start(objects, options = {}) {
      world = await startWorld(db!, objects, options);
      return world;
    },
  };
}

/** A store that dies at its `crashAt`-th putCommand and on every one after: the Lambda crashed. */
export class CrashingStore implements StateStore {
  puts = 0;
  constructor(
    private readonly inner: StateStore,
    private readonly crashAt: number,
  ) {}
  load: StateStore['load'] = (nowMs) => this.inner.load(nowMs);
  save: StateStore['save'] = (next, previous, nowMs) => this.inner.save(next, previous, nowMs);
  acquireLease: StateStore['acquireLease'] = (owner, nowMs, ttlMs) => this.inner.acquireLease(owner, nowMs, ttlMs);
  renewLease: StateStore['renewLease'] = (owner, nowMs, ttlMs) => this.inner.renewLease(owner, nowMs, ttlMs);
  releaseLease: StateStore['releaseLease'] = (owner) => this.inner.releaseLease(owner);
  readLease: StateStore['readLease'] = () => this.inner.readLease();
  listCommands: StateStore['listCommands'] = (nowMs) => this.inner.listCommands(nowMs);
  putCommand: StateStore['putCommand'] = async (cmd, expectedVersion) => {
    this.puts += 1;
    if (this.puts >= this.crashAt) throw new Error(`simulated crash before recording put #${this.puts} (step ${cmd.step})`);
    return this.inner.putCommand(cmd, expectedVersion);
  };
}

// ---------------------------------------------------------------------------------------------------
// A whole pass

export interface FullPassOptions {
  /** The lease owner (unique per invocation, as the Lambda's request id and nonce). */
  readonly owner: string;
  /** The invocation's remaining time when it starts. */
  readonly budgetMs: number;
  readonly act?: ActOptions;
  /** `ACTUATOR`; default `auto`. */
  readonly actuator?: ActuatorSetting;
  /** `KARPENTER`; default `auto`. */
  readonly karpenterPresence?: KarpenterPresence;
  readonly leaseTtlMs?: number;
  /** Command ids derived from the decision (as in production) instead of the world's `cmd-N`. Default true. */
  readonly derivedCommandIds?: boolean;
}

export interface FullPassResult {
  readonly result?: PassResult;
  /** What the pass threw (the handler logs it and goes on). */
  readonly error?: unknown;
  readonly report: ExecutionReport;
}

/**
 * One real pass as the Lambda runs it (handlers/pass.ts, wiring.ts): `runPass` takes the lease, resumes
 * unfinished commands, reads the live cluster, plans, saves, and the executor starts and drives this
 * pass's decisions; the action time goes to the store (stabilization window) and the lease is renewed
 * while acting. A pass that throws is reported, not rethrown.
 */
export async function fullPass(w: World, o: FullPassOptions): Promise<FullPassResult> {
  const leaseTtlMs = o.leaseTtlMs ?? 10 * 60_000;
  const base = w.deps(o.budgetMs, {
    onAction: recordActionInStore(w.store),
    renewLease: () => w.store.renewLease(o.owner, w.clock.nowMs, leaseTtlMs),
  });
  const deps: ActDeps = o.derivedCommandIds === false ? base : { ...base, newCommandId: undefined };
  const actor = makeActor(deps, o.act ?? FAST);
  try {
    const result = await runPass(
      {
        readCluster: () => w.cluster(),
        loadCatalog: async () => ({ catalog: await catalog(), warnings: [] }),
        loadNodePools: async () => [w.pool],
        state: w.store,
      },
      {
        nowMs: w.clock.nowMs,
        gates: { spotToSpotConsolidation: false },
        dryRun: false,
        persistState: false,
        scope: 'all',
        owner: o.owner,
        leaseTtlMs,
        ...(o.karpenterPresence === undefined ? {} : { karpenterPresence: o.karpenterPresence }),
        ...(o.actuator === undefined ? {} : { actuator: o.actuator }),
      },
      actor,
    );
    return { result, report: actor.report() };
  } catch (error) {
    return { error, report: actor.report() };
  }
}

// ---------------------------------------------------------------------------------------------------
// Reading the fake API

export function nodeSpec(api: FakeKubeApi, name: string): { taints?: { key: string; effect: string }[]; unschedulable?: boolean } | undefined {
  const node = api.store.get('Node', name);
  return node === undefined ? undefined : ((node['spec'] ?? {}) as { taints?: { key: string; effect: string }[]; unschedulable?: boolean });
}

export function events(api: FakeKubeApi, reason?: string): { node: string; reason: string; message: string; type: string }[] {
  return api.store
    .list('Event')
    .map((e) => ({
      node: String((e['involvedObject'] as Record<string, unknown>)['name']),
      reason: String(e['reason']),
      message: String(e['message']),
      type: String(e['type']),
    }))
    .filter((e) => reason === undefined || e.reason === reason);
}

/** Nodes actually deleted (a repeated, idempotent DELETE answered 404 is not counted). */
export function deletedNodes(api: FakeKubeApi): string[] {
  return api.requests.filter((r) => r.method === 'DELETE' && r.path.startsWith('/api/v1/nodes/') && r.status === 200).map((r) => decodeURIComponent(r.path.slice('/api/v1/nodes/'.length)));
}

export function evictions(api: FakeKubeApi): { pod: string; status: number }[] {
  return api.requests
    .filter((r) => r.method === 'POST' && r.path.endsWith('/eviction'))
    .map((r) => {
      const parts = r.path.split('/');
      return { pod: `${parts[4]}/${parts[6]}`, status: r.status };
    });
}
