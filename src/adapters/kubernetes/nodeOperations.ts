// The actuator's `NodeOperations` port on a Kubernetes API: the KubeWriter's idempotent writes, plus
// finding the node an EC2 instance registered as. A node names its instance only in
// `spec.providerID` (`aws:///us-east-1a/i-0abc...`), and the API offers no field selector on it, so
// the lookup lists the nodes (paged) and matches the suffix.
import type { KubeConfig } from '@kubernetes/client-node';
import { parseClusterObjects } from '../../core/input/cluster.ts';
import type { Cluster, Node, Pod, Taint } from '../../core/model/types.ts';
import type {
  DeleteResult,
  EvictionResult,
  NodeEvent,
  NodeIdentity,
  NodeLookup,
  NodeOperations,
  TaintOptions,
  TaintResult,
  UntaintOptions,
  UntaintResult,
} from '../../core/ports/actuator.ts';
import { DEFAULT_PAGE_SIZE, listAllPages, makeKubeApis, toPlainObject, type KubeApis } from './kubeClient.ts';
import { KubeWriter, type KubeWriterOptions } from './kubeWriter.ts';

export interface KubeNodeOperationsOptions extends KubeWriterOptions {
  /** A writer to use instead of one built from the same KubeConfig and options (tests). */
  readonly writer?: KubeWriter;
}

export class KubeNodeOperations implements NodeOperations {
  private readonly writer: KubeWriter;
  private readonly apis: KubeApis;
  private readonly pageSize: number;
  private readonly parse: (objects: readonly unknown[]) => Cluster;

  constructor(kubeConfig: KubeConfig, options: KubeNodeOperationsOptions = {}) {
    this.writer = options.writer ?? new KubeWriter(kubeConfig, options);
    this.apis = makeKubeApis(kubeConfig);
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    this.parse = options.parse ?? parseClusterObjects;
  }

  taintAndCordon(nodeName: string, taint: Taint, options: TaintOptions = {}): Promise<TaintResult> {
    return this.writer.taintAndCordon(nodeName, taint, options);
  }

  untaintAndUncordon(nodeName: string, taintKey: string, options: UntaintOptions = {}): Promise<UntaintResult> {
    return this.writer.untaintAndUncordon(nodeName, taintKey, options);
  }

  getNode(nodeName: string): Promise<NodeLookup> {
    return this.writer.getNode(nodeName);
  }

  async findNodeByInstanceId(instanceId: string): Promise<NodeLookup> {
    const items = await listAllPages('nodes', (page) => this.apis.core.listNode(page), this.pageSize);
    const matching = items.filter((n) => (n.spec?.providerID ?? '').endsWith(`/${instanceId}`));
    if (matching.length === 0) return { exists: false };
    const node = this.parse(matching.slice(0, 1).map((n) => toPlainObject(n, 'V1Node', 'Node', 'v1'))).nodes[0];
    if (node === undefined) return { exists: false };
    return { exists: true, ready: node.ready, node };
  }

  async listNodes(): Promise<readonly Node[]> {
    const items = await listAllPages('nodes', (page) => this.apis.core.listNode(page), this.pageSize);
    if (items.length === 0) return [];
    return this.parse(items.map((n) => toPlainObject(n, 'V1Node', 'Node', 'v1'))).nodes;
  }

  listPodsOnNode(nodeName: string): Promise<readonly Pod[]> {
    return this.writer.listPodsOnNode(nodeName);
  }

  evictPod(namespace: string, name: string, options: { readonly podUid?: string } = {}): Promise<EvictionResult> {
    return this.writer.evictPod(namespace, name, options.podUid === undefined ? {} : { podUid: options.podUid });
  }

  deleteNode(nodeName: string, options: NodeIdentity = {}): Promise<DeleteResult> {
    return this.writer.deleteNode(nodeName, options);
  }

  createEvent(event: NodeEvent): Promise<string> {
    return this.writer.createEvent(event);
  }
}
