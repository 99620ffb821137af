// Drops, from a Kubernetes object as `kubectl get -o json` or the API prints it, the bulky parts the
// planner never reads, before the object is parsed (cluster.ts) and while the rest of the input is
// still being read. A real dump is mostly such parts (managedFields alone are often half of an
// object; a node's image list runs to kilobytes), and holding 150,000 full pods takes gigabytes.
//
// A deny list, not an allow list, on purpose: every field the parser reads today or may read tomorrow
// (labels, annotations, owner references, requests, affinity, tolerations, topology spread, volumes'
// claims, status phase and conditions, ...) passes untouched, and a test checks that parsing the
// projected objects gives exactly the cluster that parsing the full ones gives. Only fields listed here
// are removed, and only where they are known to be informational. The input is never modified: the
// changed levels are copied.

type Obj = Record<string, unknown>;

const isObject = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Written by `kubectl apply`: a copy of the whole object, as a string. */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** Container fields no scheduling decision depends on (requests, ports, restartPolicy stay). */
const CONTAINER_DROPPED = new Set([
  'args',
  'command',
  'env',
  'envFrom',
  'imagePullPolicy',
  'lifecycle',
  'livenessProbe',
  'readinessProbe',
  'securityContext',
  'startupProbe',
  'stdin',
  'stdinOnce',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'tty',
  'volumeDevices',
  'volumeMounts',
  'workingDir',
]);

/** Pod status fields that describe containers and addresses, not placement. */
const POD_STATUS_DROPPED = new Set(['containerStatuses', 'initContainerStatuses', 'ephemeralContainerStatuses', 'podIPs', 'hostIPs']);

/** Node status fields that describe the machine, not its capacity or readiness. */
const NODE_STATUS_DROPPED = new Set(['images', 'nodeInfo', 'daemonEndpoints', 'addresses', 'volumesInUse', 'volumesAttached', 'config']);

const WORKLOAD_KINDS = new Set(['DaemonSet', 'Deployment', 'StatefulSet', 'ReplicaSet', 'Job']);

function without(object: Obj, dropped: ReadonlySet<string>): Obj {
  let copy: Obj | undefined;
  for (const key of Object.keys(object)) {
    if (!dropped.has(key)) continue;
    copy ??= { ...object };
    delete copy[key];
  }
  return copy ?? object;
}

function projectMetadata(metadata: unknown): unknown {
  if (!isObject(metadata)) return metadata;
  let out = metadata;
  if ('managedFields' in out) {
    out = { ...out };
    delete out['managedFields'];
  }
  const annotations = out['annotations'];
  if (isObject(annotations) && LAST_APPLIED in annotations) {
    const kept = { ...annotations };
    delete kept[LAST_APPLIED];
    out = { ...out, annotations: kept };
  }
  return out;
}

function projectContainers(containers: unknown): unknown {
  if (!Array.isArray(containers)) return containers;
  return containers.map((c) => (isObject(c) ? without(c, CONTAINER_DROPPED) : c));
}

/** A volume keeps its name and, when it has one, its claim (what volume zones are worked out from). */
function projectVolumes(volumes: unknown): unknown {
  if (!Array.isArray(volumes)) return volumes;
  return volumes.map((v) => {
    if (!isObject(v) || 'persistentVolumeClaim' in v || 'ephemeral' in v) return v;
    return 'name' in v ? { name: v['name'] } : {};
  });
}

function projectPodSpec(spec: unknown): unknown {
  if (!isObject(spec)) return spec;
  const out: Obj = { ...spec };
  for (const key of ['containers', 'initContainers', 'ephemeralContainers']) {
    if (key in out) out[key] = projectContainers(out[key]);
  }
  if ('volumes' in out) out['volumes'] = projectVolumes(out['volumes']);
  return out;
}

/** The object without what the planner never reads; anything unexpected is passed through as it is. */
export function projectClusterObject(object: unknown): unknown {
  if (!isObject(object)) return object;
  const kind = object['kind'];
  if (kind === 'List' && Array.isArray(object['items'])) return { ...object, items: object['items'].map(projectClusterObject) };
  const out: Obj = { ...object };
  if ('metadata' in out) out['metadata'] = projectMetadata(out['metadata']);
  if (kind === 'Pod') {
    if ('spec' in out) out['spec'] = projectPodSpec(out['spec']);
    if (isObject(out['status'])) out['status'] = without(out['status'], POD_STATUS_DROPPED);
  } else if (kind === 'Node') {
    if (isObject(out['status'])) out['status'] = without(out['status'], NODE_STATUS_DROPPED);
  } else if (typeof kind === 'string' && WORKLOAD_KINDS.has(kind) && isObject(out['spec'])) {
    const spec = out['spec'];
    const template = spec['template'];
    if (isObject(template)) {
      const projected: Obj = { ...template };
      if ('metadata' in projected) projected['metadata'] = projectMetadata(projected['metadata']);
      if ('spec' in projected) projected['spec'] = projectPodSpec(projected['spec']);
      out['spec'] = { ...spec, template: projected };
    }
  }
  return out;
}
