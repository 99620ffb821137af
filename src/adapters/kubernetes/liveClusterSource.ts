// The cluster as the Kubernetes API shows it now. Every collection the model needs is listed in full
// (paged), turned back into the plain JSON `kubectl get -o json` prints, and handed to the same parser
// the CLI uses for a `--cluster` file: one mapping from Kubernetes objects to the model, whatever the
// source.
import type { KubeConfig } from '@kubernetes/client-node';
import { InputError } from '../../core/errors.ts';
import { ClusterBuilder } from '../../core/input/cluster.ts';
import { projectClusterObject } from '../../core/input/projection.ts';
import type { Cluster } from '../../core/model/types.ts';
import type { ClusterSource } from '../../core/ports/cluster.ts';
import { DEFAULT_PAGE_SIZE, listAllPagesInto, listAllPagesMapped, makeKubeApis, toPlainObject } from './kubeClient.ts';
import type { KubeApis, ListPage } from './kubeClient.ts';

/** One collection to read: how to list a page of it and what its items are. */
interface Collection {
  /** Plural resource name, used in errors: `pods`, `poddisruptionbudgets`. */
  readonly resource: string;
  readonly kind: string;
  readonly apiVersion: string;
  /** The client's model name for an item, for serialisation. */
  readonly model: string;
  readonly list: (apis: KubeApis, page: { limit: number; _continue?: string }) => Promise<ListPage<unknown>>;
}

/** Everything the model reads, cluster-wide. */
const COLLECTIONS: readonly Collection[] = [
  { resource: 'nodes', kind: 'Node', apiVersion: 'v1', model: 'V1Node', list: (a, p) => a.core.listNode(p) },
  {
    resource: 'pods',
    kind: 'Pod',
    apiVersion: 'v1',
    model: 'V1Pod',
    list: (a, p) => a.core.listPodForAllNamespaces(p),
  },
  {
    resource: 'poddisruptionbudgets',
    kind: 'PodDisruptionBudget',
    apiVersion: 'policy/v1',
    model: 'V1PodDisruptionBudget',
    list: (a, p) => a.policy.listPodDisruptionBudgetForAllNamespaces(p),
  },
  {
    resource: 'daemonsets',
    kind: 'DaemonSet',
    apiVersion: 'apps/v1',
    model: 'V1DaemonSet',
    list: (a, p) => a.apps.listDaemonSetForAllNamespaces(p),
  },
  {
    resource: 'deployments',
    kind: 'Deployment',
    apiVersion: 'apps/v1',
    model: 'V1Deployment',
    list: (a, p) => a.apps.listDeploymentForAllNamespaces(p),
  },
  {
    resource: 'statefulsets',
    kind: 'StatefulSet',
    apiVersion: 'apps/v1',
    model: 'V1StatefulSet',
    list: (a, p) => a.apps.listStatefulSetForAllNamespaces(p),
  },
  {
    resource: 'replicasets',
    kind: 'ReplicaSet',
    apiVersion: 'apps/v1',
    model: 'V1ReplicaSet',
    list: (a, p) => a.apps.listReplicaSetForAllNamespaces(p),
  },
  {
    resource: 'namespaces',
    kind: 'Namespace',
    apiVersion: 'v1',
    model: 'V1Namespace',
    list: (a, p) => a.core.listNamespace(p),
  },
  {
    resource: 'persistentvolumes',
    kind: 'PersistentVolume',
    apiVersion: 'v1',
    model: 'V1PersistentVolume',
    list: (a, p) => a.core.listPersistentVolume(p),
  },
  {
    resource: 'persistentvolumeclaims',
    kind: 'PersistentVolumeClaim',
    apiVersion: 'v1',
    model: 'V1PersistentVolumeClaim',
    list: (a, p) => a.core.listPersistentVolumeClaimForAllNamespaces(p),
  },
];

/** The resources a live read lists (for RBAC documentation: each needs `list`). */
export const LISTED_RESOURCES: readonly string[] = COLLECTIONS.map((c) => c.resource);

export interface LiveClusterSourceOptions {
  /** Items per list page (`limit`). Default 500. */
  readonly pageSize?: number;
  /** The object-to-model mapping (tests may substitute); default: each page parsed as it arrives. */
  readonly parse?: (objects: readonly unknown[]) => Cluster;
}

/**
 * One collection's objects, projected and parsed as they arrive. The first object the model refuses is
 * kept, not thrown: thrown inside the pager it would read as a failed list call.
 */
class CollectionSink {
  readonly builder = new ClusterBuilder();
  refused: InputError | undefined;
  private count = 0;

  constructor(private readonly collection: Collection) {}

  add(item: unknown): void {
    const at = this.count++;
    if (this.refused) return;
    const c = this.collection;
    try {
      this.builder.add(projectClusterObject(toPlainObject(item, c.model, c.kind, c.apiVersion)), `${c.resource}[${at}]`);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      this.refused = error;
    }
  }
}

export class LiveClusterSource implements ClusterSource {
  private readonly apis: KubeApis;
  private readonly pageSize: number;
  private readonly parse: ((objects: readonly unknown[]) => Cluster) | undefined;

  constructor(kubeConfig: KubeConfig, options: LiveClusterSourceOptions = {}) {
    this.apis = makeKubeApis(kubeConfig);
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    this.parse = options.parse;
  }

  /**
   * Lists everything and maps it to the model. Rejects with a KubernetesApiError naming the resource
   * when a list fails, with an InputError (file `Kubernetes API`) when an object cannot be read.
   */
  async read(): Promise<Cluster> {
    try {
      if (this.parse) return this.parse(await this.readObjects({ projected: true }));
      // Each page is projected (core/input/projection.ts) and parsed into the model as it arrives, one
      // builder per collection: only the model is kept, not the objects (memory at thousands of nodes).
      const sinks = await Promise.all(
        COLLECTIONS.map((c) =>
          listAllPagesInto(c.resource, (page) => c.list(this.apis, page), () => new CollectionSink(c), this.pageSize),
        ),
      );
      // The first object the model cannot read, in the order the collections are listed.
      const refused = sinks.find((sink) => sink.refused)?.refused;
      if (refused) throw refused;
      return ClusterBuilder.merged(sinks.map((sink) => sink.builder)).finish();
    } catch (error) {
      // An object the API holds but the model cannot read: say where it came from.
      if (error instanceof InputError && error.file === undefined) throw error.inFile('Kubernetes API');
      throw error;
    }
  }

  /**
   * The plain Kubernetes objects behind `read()`, in kubectl's JSON shape with `kind`/`apiVersion`
   * set: handy to dump a live cluster into a `--cluster` file for an offline `plan`.
   */
  async readObjects(options: { readonly projected?: boolean } = {}): Promise<Record<string, unknown>[]> {
    const lists = await Promise.all(
      COLLECTIONS.map((c) =>
        listAllPagesMapped(
          c.resource,
          (page) => c.list(this.apis, page),
          (item) => {
            const plain = toPlainObject(item, c.model, c.kind, c.apiVersion);
            return options.projected ? (projectClusterObject(plain) as Record<string, unknown>) : plain;
          },
          this.pageSize,
        ),
      ),
    );
    return lists.flat();
  }
}
