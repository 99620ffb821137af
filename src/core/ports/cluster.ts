// Where the cluster comes from, seen from the application. The live source (the Kubernetes API of an
// EKS cluster) and the file source (a `kubectl get ... -o json` dump) both answer through this port, so
// a consolidation pass is the same code whether it runs in the Lambda or in the CLI.
import type { Cluster } from '../model/types.ts';

export interface ClusterSource {
  /**
   * One consistent-enough snapshot of the cluster: nodes, pods, PDBs, daemonsets, workload status and
   * namespaces. Rejects (never returns a partial cluster) when any part of it cannot be read: planning
   * on a cluster with, say, the PDBs missing would disrupt what must not be disrupted.
   */
  read(): Promise<Cluster>;
}
