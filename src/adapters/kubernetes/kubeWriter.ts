// The Kubernetes writes a disruption needs, each idempotent and each answering in the actuator's terms
// rather than in HTTP codes: a node that is already tainted is tainted, a pod that is already gone
// needs no eviction, a node already deleted is deleted. Evictions go through the Eviction API only:
// a PodDisruptionBudget that refuses one is an answer (`blockedByPdb`), never something to force.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { CoreV1Event, KubeConfig, V1Node, V1Taint } from '@kubernetes/client-node';
import { parseClusterObjects } from '../../core/input/cluster.ts';
import { InterruptedTaint, type Cluster, type Node, type Pod, type Taint } from '../../core/model/types.ts';
import {
  DEFAULT_PAGE_SIZE,
  KubernetesApiError,
  apiStatusOf,
  callKube,
  listAllPages,
  makeKubeApis,
  statusCodeOf,
  toKubernetesError,
  toPlainObject,
} from './kubeClient.ts';
import type { KubeApis } from './kubeClient.ts';

// The result shapes are the actuator port's (src/core/ports/actuator.ts): this adapter implements them.
export type { DeleteResult, EvictionResult, NodeLookup, TaintResult, UntaintResult } from '../../core/ports/actuator.ts';
import {
  COMMAND_ANNOTATION,
  type DeleteResult,
  type EvictionResult,
  type NodeIdentity,
  type NodeLookup,
  type TaintOptions,
  type TaintResult,
  type UntaintOptions,
  type UntaintResult,
} from '../../core/ports/actuator.ts';

export interface NodeEvent {
  readonly nodeName: string;
  /** Short CamelCase reason, e.g. `DisruptionBlocked`, `Unconsolidatable`. */
  readonly reason: string;
  /** A sentence for a person; cut to 1024 characters. */
  readonly message: string;
  readonly type: 'Normal' | 'Warning';
  /**
   * UID of the involved object. Default: the node's name, which is what the kubelet uses for node
   * events and what `kubectl describe node` looks for.
   */
  readonly nodeUid?: string;
}

export interface EvictOptions {
  /** Overrides the pod's terminationGracePeriodSeconds (never 0 here: that would be a force). */
  readonly gracePeriodSeconds?: number;
  /** Evict only this incarnation of the pod: a StatefulSet pod recreated under the same name is not touched. */
  readonly podUid?: string;
}

export interface KubeWriterOptions {
  /** The clock for event times, epoch ms. Default: Date.now. */
  readonly now?: () => number;
  /** Event source component and field manager. Default `eks-consolidator`. */
  readonly component?: string;
  /** Event reportingInstance, e.g. the Lambda's log stream. */
  readonly instance?: string;
  /** Attempts of a node patch that lost a race with another writer. Default 5. */
  readonly patchAttempts?: number;
  /** Page size of `listPodsOnNode`. Default 500. */
  readonly pageSize?: number;
  /** The object-to-model mapping; default `parseClusterObjects`. */
  readonly parse?: (objects: readonly unknown[]) => Cluster;
}

/** Namespace of node events (nodes are cluster-scoped; the kubelet records theirs here too). */
const NODE_EVENT_NAMESPACE = 'default';
const MAX_EVENT_MESSAGE = 1024;

type JsonPatchOp =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string };

export class KubeWriter {
  private readonly apis: KubeApis;
  private readonly now: () => number;
  private readonly component: string;
  private readonly instance: string | undefined;
  private readonly patchAttempts: number;
  private readonly pageSize: number;
  private readonly parse: (objects: readonly unknown[]) => Cluster;
  private eventSeq = 0;

  constructor(kubeConfig: KubeConfig, options: KubeWriterOptions = {}) {
    this.apis = makeKubeApis(kubeConfig);
    this.now = options.now ?? Date.now;
    this.component = options.component ?? 'eks-consolidator';
    this.instance = options.instance;
    this.patchAttempts = options.patchAttempts ?? 5;
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    this.parse = options.parse ?? parseClusterObjects;
  }

  /**
   * Puts `taint` on the node (replacing a taint with the same key and effect), cordons it and, with a
   * `commandId`, marks it with our command annotation. Already so: nothing is written. The patch is a
   * JSON Patch guarded by a `test` of the node's resourceVersion (and uid, when given), so a concurrent
   * change is never overwritten (the node is read again and the patch rebuilt) and a node registered
   * again under the same name is never touched (`gone`).
   */
  async taintAndCordon(nodeName: string, taint: Taint, options: TaintOptions = {}): Promise<TaintResult> {
    return this.patchNodeUntilStable(nodeName, 'taint and cordon', options.uid, (node) => {
      const taints = node.spec?.taints ?? [];
      const present = taints.some((t) => sameTaint(t, taint));
      const cordoned = node.spec?.unschedulable === true;
      const annotations = node.metadata?.annotations ?? {};
      const marked = options.commandId === undefined || annotations[COMMAND_ANNOTATION] === options.commandId;
      if (present && cordoned && marked) return undefined;
      const ops: JsonPatchOp[] = [];
      if (!present) {
        const kept = taints.filter((t) => !(t.key === taint.key && t.effect === taint.effect));
        ops.push({ op: 'add', path: '/spec/taints', value: [...kept.map(taintJson), taintJson(taint)] });
      }
      if (!cordoned) ops.push({ op: 'add', path: '/spec/unschedulable', value: true });
      // The whole map, not one key: a JSON Pointer to a key with a slash needs escaping, and the
      // resourceVersion test already protects the other annotations from a lost update.
      if (!marked) ops.push({ op: 'add', path: '/metadata/annotations', value: { ...annotations, [COMMAND_ANNOTATION]: options.commandId } });
      return ops;
    }).then((r) => (r === 'patched' ? 'tainted' : r === 'unchanged' ? 'alreadyTainted' : 'gone'));
  }

  /**
   * Removes every taint with `taintKey` and our command annotation and, unless `uncordon` is false,
   * uncordons the node. Nothing to remove: nothing is written.
   */
  async untaintAndUncordon(nodeName: string, taintKey: string, options: UntaintOptions = {}): Promise<UntaintResult> {
    const uncordon = options.uncordon ?? true;
    return this.patchNodeUntilStable(nodeName, 'untaint and uncordon', options.uid, (node) => {
      const taints = node.spec?.taints ?? [];
      const kept = taints.filter((t) => t.key !== taintKey);
      const ops: JsonPatchOp[] = [];
      if (kept.length !== taints.length) {
        ops.push(kept.length === 0 ? { op: 'remove', path: '/spec/taints' } : { op: 'add', path: '/spec/taints', value: kept.map(taintJson) });
      }
      // A node whose instance has an interruption notice stays cordoned whoever gives it back: its
      // instance is going away (the interruption function cordoned it, as aws-node-termination-handler does).
      const interrupted = taints.some((t) => t.key === InterruptedTaint.key);
      if (uncordon && !interrupted && node.spec?.unschedulable === true) ops.push({ op: 'remove', path: '/spec/unschedulable' });
      const annotations = node.metadata?.annotations ?? {};
      if (COMMAND_ANNOTATION in annotations) {
        const { [COMMAND_ANNOTATION]: _ours, ...rest } = annotations;
        ops.push({ op: 'add', path: '/metadata/annotations', value: rest });
      }
      return ops.length === 0 ? undefined : ops;
    }).then((r) => (r === 'patched' ? 'untainted' : r === 'unchanged' ? 'alreadyClean' : 'gone'));
  }

  /**
   * Asks the Eviction API (policy/v1) to evict the pod. 429 (a PodDisruptionBudget allows no disruption
   * now; the API server also uses 429 for throttling, which calls for the same answer: try later) is
   * `blockedByPdb`; 404, or a 409 on the uid precondition, is `gone`.
   */
  async evictPod(namespace: string, name: string, options: EvictOptions = {}): Promise<EvictionResult> {
    const deleteOptions = {
      ...(options.gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds: Math.max(1, options.gracePeriodSeconds) }),
      ...(options.podUid === undefined ? {} : { preconditions: { uid: options.podUid } }),
    };
    try {
      await this.apis.core.createNamespacedPodEviction({
        namespace,
        name,
        body: {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name, namespace },
          ...(Object.keys(deleteOptions).length === 0 ? {} : { deleteOptions }),
        },
      });
      return 'evicted';
    } catch (error) {
      const code = statusCodeOf(error);
      if (code === 429) return 'blockedByPdb';
      if (code === 404) return 'gone';
      if (code === 409 && options.podUid !== undefined) return 'gone';
      throw toKubernetesError(error, 'evict', `Pod ${namespace}/${name}`);
    }
  }

  /**
   * Deletes the Node object. Already gone: `gone`, not an error. With `uid`, the API deletes only that
   * incarnation (a precondition): a node registered again under the same name answers 409, also `gone`
   * for the caller, whose node it is not.
   */
  async deleteNode(name: string, options: NodeIdentity = {}): Promise<DeleteResult> {
    try {
      await this.apis.core.deleteNode({ name, ...(options.uid === undefined ? {} : { body: { preconditions: { uid: options.uid } } }) });
      return 'deleted';
    } catch (error) {
      const code = statusCodeOf(error);
      if (code === 404 || (code === 409 && options.uid !== undefined)) return 'gone';
      throw toKubernetesError(error, 'delete', `Node ${name}`);
    }
  }

  /** Whether the node exists and is Ready, with its model view. */
  async getNode(name: string): Promise<NodeLookup> {
    const node = await this.readNodeOrUndefined(name, 'get');
    if (node === undefined) return { exists: false };
    const parsed = this.parse([toPlainObject(node, 'V1Node', 'Node', 'v1')]).nodes[0];
    if (parsed === undefined) {
      throw new KubernetesApiError('get', `Node ${name}`, 'the answer could not be read as a node');
    }
    return { exists: true, ready: parsed.ready, node: parsed };
  }

  /** Every pod bound to the node (any phase, daemonset and mirror pods included), as the model sees them. */
  async listPodsOnNode(name: string): Promise<readonly Pod[]> {
    const fieldSelector = `spec.nodeName=${name}`;
    const items = await listAllPages(
      `pods on Node ${name}`,
      (page) => this.apis.core.listPodForAllNamespaces({ ...page, fieldSelector }),
      this.pageSize,
    );
    return this.parse(items.map((p) => toPlainObject(p, 'V1Pod', 'Pod', 'v1'))).pods;
  }

  /**
   * Records a Kubernetes Event on the node (shown by `kubectl describe node` and `kubectl get events`).
   * Returns the event's name. Deduplication is the caller's business.
   */
  async createEvent(event: NodeEvent): Promise<string> {
    const at = new Date(this.now());
    this.eventSeq += 1;
    // client-go names events `<object>.<unix nanos in hex>`; the sequence keeps same-ms events apart.
    const name = `${event.nodeName}.${(BigInt(at.getTime()) * 1_000_000n + BigInt(this.eventSeq % 1_000_000)).toString(16)}`;
    const message =
      event.message.length > MAX_EVENT_MESSAGE ? `${event.message.slice(0, MAX_EVENT_MESSAGE - 3)}...` : event.message;
    const body: CoreV1Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace: NODE_EVENT_NAMESPACE },
      involvedObject: { apiVersion: 'v1', kind: 'Node', name: event.nodeName, uid: event.nodeUid ?? event.nodeName },
      reason: event.reason,
      message,
      type: event.type,
      source: { component: this.component },
      reportingComponent: this.component,
      ...(this.instance === undefined ? {} : { reportingInstance: this.instance }),
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
    };
    await callKube('create event on', `Node ${event.nodeName}`, () =>
      this.apis.core.createNamespacedEvent({ namespace: NODE_EVENT_NAMESPACE, body }),
    );
    return name;
  }

  // -------------------------------------------------------------------------------------------------

  private async readNodeOrUndefined(name: string, operation: string): Promise<V1Node | undefined> {
    try {
      return await this.apis.core.readNode({ name });
    } catch (error) {
      if (statusCodeOf(error) === 404) return undefined;
      throw toKubernetesError(error, operation, `Node ${name}`);
    }
  }

  /**
   * Reads the node, asks `plan` for the JSON Patch that brings it where it should be (undefined: it is
   * there already) and sends it guarded by the resourceVersion it was planned on. A lost race (the
   * `test` failed: 422, or 409) means read and plan again, up to `patchAttempts` times.
   */
  private async patchNodeUntilStable(
    nodeName: string,
    operation: string,
    uid: string | undefined,
    plan: (node: V1Node) => JsonPatchOp[] | undefined,
  ): Promise<'patched' | 'unchanged' | 'gone'> {
    const resource = `Node ${nodeName}`;
    for (let attempt = 1; ; attempt += 1) {
      const node = await this.readNodeOrUndefined(nodeName, operation);
      if (node === undefined) return 'gone';
      // Another machine registered under this name: not the node the caller means.
      if (uid !== undefined && node.metadata?.uid !== uid) return 'gone';
      const ops = plan(node);
      if (ops === undefined) return 'unchanged';
      const resourceVersion = node.metadata?.resourceVersion;
      const guarded: JsonPatchOp[] = [
        ...(uid === undefined ? [] : [{ op: 'test' as const, path: '/metadata/uid', value: uid }]),
        ...(resourceVersion === undefined ? [] : [{ op: 'test' as const, path: '/metadata/resourceVersion', value: resourceVersion }]),
        ...ops,
      ];
      try {
        await this.apis.core.patchNode(
          { name: nodeName, body: guarded, fieldManager: this.component },
          setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
        );
        return 'patched';
      } catch (error) {
        const code = statusCodeOf(error);
        if (code === 404) return 'gone';
        const raced = code === 409 || (code === 422 && isFailedTest(error));
        if (!raced) throw toKubernetesError(error, operation, resource);
        if (attempt >= this.patchAttempts) {
          throw new KubernetesApiError(
            operation,
            resource,
            `the node kept changing under us (${attempt} attempts lost a race with another writer)`,
            code,
            { cause: error },
          );
        }
      }
    }
  }
}

/**
 * A 422 caused by a failed JSON Patch `test`: the API server passes the patch library's "testing value
 * ... failed" along, in the Status message or in its causes.
 */
function isFailedTest(error: unknown): boolean {
  const status = apiStatusOf(error);
  const texts = [status?.message ?? '', ...(status?.details?.causes ?? []).map((c) => c.message ?? '')];
  return texts.some((text) => /\btest(ing)?\b/i.test(text));
}

function sameTaint(existing: V1Taint, wanted: Taint): boolean {
  return existing.key === wanted.key && existing.effect === wanted.effect && (existing.value ?? '') === (wanted.value ?? '');
}

/** A taint as the API's JSON holds it (timeAdded as RFC 3339 seconds, absent fields left out). */
function taintJson(taint: V1Taint | Taint): Record<string, unknown> {
  const timeAdded = (taint as V1Taint).timeAdded;
  return {
    key: taint.key,
    ...(taint.value === undefined || taint.value === '' ? {} : { value: taint.value }),
    effect: taint.effect,
    ...(timeAdded instanceof Date ? { timeAdded: timeAdded.toISOString().replace(/\.\d{3}Z$/, 'Z') } : {}),
  };
}
