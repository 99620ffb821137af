// Reading stored state records back into the core's shapes, checking every field. Shared by the file
// store (times as ISO 8601 strings, errors become `InputError`s naming the file) and the DynamoDB store
// (times as epoch-ms numbers, errors become `StateCorruptError`s). Unknown members are ignored so that
// a newer build can add optional fields without breaking an older one reading the same state.

import {
  FINAL_COMMAND_STEPS,
  type ClusterState,
  type CommandStep,
  type DisruptionCommand,
  type DisruptionMethod,
  type LaunchedReplacement,
  type NodeState,
  type ReplacementSpec,
} from '../../core/state/types.ts';
import { parseRfc3339 } from '../../core/input/time.ts';
import { compact } from '../../core/state/observe.ts';

/** Reports a bad field (full dotted path) and never returns. */
export type Fail = (field: string, problem: string) => never;

export interface TimeCodec {
  /** Epoch ms, or undefined when `value` is not a timestamp in this encoding. */
  read(value: unknown): number | undefined;
  write(ms: number): unknown;
}

/** 10000-01-01T00:00:00Z. */
const FIRST_FIVE_DIGIT_YEAR_MS = 253_402_300_800_000;

/** ISO 8601 in files (readable when a person opens `--state`); epoch-ms numbers also accepted. */
export const isoTime: TimeCodec = {
  read: (value) => {
    // Only times that write back as four-digit-year ISO text are accepted, so that whatever is read can
    // be written and read again (a larger number would make toISOString throw or print `+010000-...`).
    if (typeof value === 'number') return Number.isFinite(value) && value >= 0 && value < FIRST_FIVE_DIGIT_YEAR_MS ? value : undefined;
    // With an offset (without one, the machine's zone would decide) and a date that exists (JavaScript
    // would roll February 30th over into March).
    if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(value)) return undefined;
    const ms = parseRfc3339(value);
    return typeof ms === 'string' ? undefined : ms;
  },
  write: (ms) => new Date(ms).toISOString(),
};

/** Epoch-ms numbers (DynamoDB). */
export const epochMsTime: TimeCodec = {
  read: (value) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined),
  write: (ms) => ms,
};

const STEPS: ReadonlySet<string> = new Set<CommandStep>([
  'tainted',
  'launched',
  'replacementReady',
  'evicting',
  'terminated',
  'rollingBack',
  ...FINAL_COMMAND_STEPS,
]);
const METHODS: ReadonlySet<string> = new Set<DisruptionMethod>(['emptiness', 'single-node', 'multi-node']);

/**
 * How far a stored time that must lie in the past may lie ahead of the pass reading it: one hour. Far
 * more than clocks kept by NTP ever differ (a pass dates what it stores by its own clock, and the next
 * pass may run on another machine), and little next to what a time far ahead would do: a pod event
 * dated in the future keeps its node from being consolidated until then.
 */
export const CLOCK_SKEW_ALLOWANCE_MS = 3_600_000;

export interface RecordReadOptions {
  /**
   * The pass time. When given, times that record something that already happened (pod events, first
   * sightings, evaluations, searches) may not lie later than it by more than CLOCK_SKEW_ALLOWANCE_MS.
   * Times that are meant to lie ahead (expiry, grace protection, lease ends) are not bounded.
   */
  readonly passTimeMs?: number;
}

/** Field-by-field access to one raw record, reporting problems with the record's path. */
export class RecordReader {
  constructor(
    private readonly raw: Record<string, unknown>,
    private readonly path: string,
    private readonly fail: Fail,
    private readonly times: TimeCodec,
    private readonly options: RecordReadOptions = {},
  ) {}

  static of(value: unknown, path: string, fail: Fail, times: TimeCodec, options: RecordReadOptions = {}): RecordReader {
    if (!isRecord(value)) fail(path, value === null ? 'not an object (null)' : 'not an object');
    return new RecordReader(value, path, fail, times, options);
  }

  field(key: string): string {
    return this.path === '' ? key : `${this.path}.${key}`;
  }

  has(key: string): boolean {
    return this.raw[key] !== undefined && this.raw[key] !== null;
  }

  member(key: string): unknown {
    return this.raw[key];
  }

  string(key: string): string;
  string(key: string, optional: true): string | undefined;
  string(key: string, optional = false): string | undefined {
    const v = this.raw[key];
    if (v === undefined || v === null) return optional ? undefined : this.fail(this.field(key), 'missing');
    if (typeof v !== 'string') return this.fail(this.field(key), 'not a string');
    return v;
  }

  number(key: string): number;
  number(key: string, optional: true): number | undefined;
  number(key: string, optional = false): number | undefined {
    const v = this.raw[key];
    if (v === undefined || v === null) return optional ? undefined : this.fail(this.field(key), 'missing');
    if (typeof v === 'number' && !Number.isFinite(v)) return this.fail(this.field(key), 'a number too large to represent');
    if (typeof v !== 'number') return this.fail(this.field(key), 'not a number');
    return v;
  }

  /** A non-negative integer (versions, counts). */
  count(key: string): number {
    const v = this.number(key);
    if (!Number.isInteger(v) || v < 0) this.fail(this.field(key), 'not a non-negative integer');
    return v;
  }

  boolean(key: string, optional: true): boolean | undefined {
    const v = this.raw[key];
    if (v === undefined || v === null) return optional ? undefined : this.fail(this.field(key), 'missing');
    if (typeof v !== 'boolean') return this.fail(this.field(key), 'not a boolean');
    return v;
  }

  time(key: string): number;
  time(key: string, optional: true): number | undefined;
  time(key: string, optional = false): number | undefined {
    const v = this.raw[key];
    if (v === undefined || v === null) return optional ? undefined : this.fail(this.field(key), 'missing');
    const ms = this.times.read(v);
    if (ms === undefined) return this.fail(this.field(key), 'not a timestamp');
    return ms;
  }

  /** A time that records something that already happened: see RecordReadOptions.passTimeMs. */
  pastTime(key: string): number;
  pastTime(key: string, optional: true): number | undefined;
  pastTime(key: string, optional = false): number | undefined {
    const ms = optional ? this.time(key, true) : this.time(key);
    const passTimeMs = this.options.passTimeMs;
    if (ms !== undefined && passTimeMs !== undefined && ms > passTimeMs + CLOCK_SKEW_ALLOWANCE_MS) {
      this.fail(
        this.field(key),
        `${JSON.stringify(this.raw[key])} is later than the pass time ${new Date(passTimeMs).toISOString()} by more than the ` +
          `${CLOCK_SKEW_ALLOWANCE_MS / 3_600_000}h allowed for clock differences, but records something that already happened ` +
          '(was the state written by a pass with a later time, or on a machine whose clock runs ahead?)',
      );
    }
    return ms;
  }

  strings(key: string): string[] {
    const v = this.raw[key];
    if (v === undefined || v === null) return this.fail(this.field(key), 'missing');
    if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) return this.fail(this.field(key), 'not a list of strings');
    return v as string[];
  }

  /** A list of anything (its items are read one by one by the caller). */
  list(key: string): unknown[] {
    const v = this.raw[key];
    if (!Array.isArray(v)) return this.fail(this.field(key), 'not a list');
    return v;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function readNodeState(r: RecordReader): NodeState {
  return compact({
    name: r.string('name'),
    nodeCreatedAt: r.pastTime('nodeCreatedAt', true),
    podSetFingerprint: r.string('podSetFingerprint'),
    podCount: r.count('podCount'),
    podUids: r.has('podUids') ? r.strings('podUids') : undefined,
    lastPodEventAt: r.pastTime('lastPodEventAt', true),
    emptySince: r.pastTime('emptySince', true),
    consolidatableSince: r.pastTime('consolidatableSince', true),
    graceProtectedUntil: r.time('graceProtectedUntil', true),
    lastEvaluatedAt: r.pastTime('lastEvaluatedAt', true),
    version: r.count('version'),
    expiresAt: r.time('expiresAt'),
  });
}

export function writeNodeState(node: NodeState, times: TimeCodec): Record<string, unknown> {
  const t = (ms: number | undefined): unknown => (ms === undefined ? undefined : times.write(ms));
  return compact({
    name: node.name,
    nodeCreatedAt: t(node.nodeCreatedAt),
    podSetFingerprint: node.podSetFingerprint,
    podCount: node.podCount,
    podUids: node.podUids,
    lastPodEventAt: t(node.lastPodEventAt),
    emptySince: t(node.emptySince),
    consolidatableSince: t(node.consolidatableSince),
    graceProtectedUntil: t(node.graceProtectedUntil),
    lastEvaluatedAt: t(node.lastEvaluatedAt),
    version: node.version,
    expiresAt: t(node.expiresAt),
  });
}

export function readClusterState(r: RecordReader): ClusterState {
  return compact({
    lastActionAt: r.pastTime('lastActionAt', true),
    lastFingerprint: r.string('lastFingerprint', true),
    lastPassFoundNothing: r.boolean('lastPassFoundNothing', true),
    lastSearchAt: r.pastTime('lastSearchAt', true),
    version: r.count('version'),
  });
}

export function writeClusterState(cluster: ClusterState, times: TimeCodec): Record<string, unknown> {
  const t = (ms: number | undefined): unknown => (ms === undefined ? undefined : times.write(ms));
  return compact({
    lastActionAt: t(cluster.lastActionAt),
    lastFingerprint: cluster.lastFingerprint,
    lastPassFoundNothing: cluster.lastPassFoundNothing,
    lastSearchAt: t(cluster.lastSearchAt),
    version: cluster.version,
  });
}

export function readCommand(r: RecordReader, fail: Fail, times: TimeCodec): DisruptionCommand {
  const method = r.string('method');
  if (!METHODS.has(method)) fail(r.field('method'), `not one of ${[...METHODS].join(', ')}`);
  const step = r.string('step');
  if (!STEPS.has(step)) fail(r.field('step'), `not one of ${[...STEPS].join(', ')}`);
  // Records of older builds hold one `replacement`, `launchedInstanceId` and `replacementNodeName`.
  const replacements = r.has('replacements')
    ? r.list('replacements').map((item, i) => readReplacement(RecordReader.of(item, `${r.field('replacements')}[${i}]`, fail, times), fail))
    : r.has('replacement')
      ? [readReplacement(RecordReader.of(r.member('replacement'), r.field('replacement'), fail, times), fail)]
      : undefined;
  let launched: LaunchedReplacement[] | undefined;
  if (r.has('launched')) {
    launched = r.list('launched').map((item, i) => {
      const lr = RecordReader.of(item, `${r.field('launched')}[${i}]`, fail, times);
      return compact({ index: lr.count('index'), ref: lr.string('ref'), instanceId: lr.string('instanceId', true), nodeName: lr.string('nodeName', true) });
    });
  } else if (r.has('launchedInstanceId')) {
    const instanceId = r.string('launchedInstanceId');
    launched = [compact({ index: 0, ref: instanceId, instanceId, nodeName: r.string('replacementNodeName', true) })];
  }
  return compact({
    id: r.string('id'),
    createdAt: r.pastTime('createdAt'),
    nodes: r.strings('nodes'),
    method: method as DisruptionMethod,
    reason: r.string('reason'),
    replacements,
    step: step as CommandStep,
    launched,
    updatedAt: r.pastTime('updatedAt'),
    version: r.count('version'),
    detail: r.string('detail', true),
  });
}

function readReplacement(rr: RecordReader, fail: Fail): ReplacementSpec {
  const capacityType = rr.string('capacityType');
  if (capacityType !== 'on-demand' && capacityType !== 'spot') fail(rr.field('capacityType'), 'not on-demand or spot');
  const actuator = rr.string('actuator', true);
  if (actuator !== undefined && actuator !== 'ec2' && actuator !== 'karpenter') fail(rr.field('actuator'), 'not ec2 or karpenter');
  return compact({
    instanceTypes: rr.strings('instanceTypes'),
    capacityType,
    zones: rr.strings('zones'),
    pricePerHour: rr.number('pricePerHour'),
    nodePool: rr.string('nodePool', true),
    actuator,
    worstPricePerHour: rr.number('worstPricePerHour', true),
  });
}

export function writeCommand(cmd: DisruptionCommand, times: TimeCodec): Record<string, unknown> {
  return compact({
    id: cmd.id,
    createdAt: times.write(cmd.createdAt),
    nodes: [...cmd.nodes],
    method: cmd.method,
    reason: cmd.reason,
    replacements: cmd.replacements?.map((r) =>
      compact({
        instanceTypes: [...r.instanceTypes],
        capacityType: r.capacityType,
        zones: [...r.zones],
        pricePerHour: r.pricePerHour,
        nodePool: r.nodePool,
        actuator: r.actuator,
        worstPricePerHour: r.worstPricePerHour,
      }),
    ),
    step: cmd.step,
    launched: cmd.launched?.map((l) => compact({ index: l.index, ref: l.ref, instanceId: l.instanceId, nodeName: l.nodeName })),
    updatedAt: times.write(cmd.updatedAt),
    version: cmd.version,
    detail: cmd.detail,
  });
}

/** Oldest first, then by id: the order stores list commands in. */
export function sortCommands(commands: readonly DisruptionCommand[]): DisruptionCommand[] {
  return [...commands].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
