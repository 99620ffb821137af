// The field tree of a `karpenter.sh/v1` NodePool as Karpenter v1.14's CRD declares it, used to refuse
// fields the API server would refuse (CRDs are structural: `kubectl apply` fails on an unknown field
// under strict field validation, its default). A misspelled field must not be silently ignored: the
// plan would then follow a setting the user never made (docs/nodepools.md, "Honoured or refused,
// never ignored").
//
// Only the shape is checked here; values are checked where they are read (nodePools.ts). Fields this
// product adds on top of Karpenter's (consolidationGracePeriod, from Karpenter's consolidationGracePeriod
// design, and consolidationSavingsThresholdCents, from its savings-threshold design) are part of the
// tree.
import { closest } from './closestName.ts';
import { Fields, isRecord, joinPath, show } from './fields.ts';

/** `any`: not inspected (status, metadata internals, limits' resource names). */
type Shape = 'any' | { readonly fields: Readonly<Record<string, Shape>> } | { readonly items: Shape };

const obj = (fields: Record<string, Shape>): Shape => ({ fields });
const list = (items: Shape): Shape => ({ items });

const TAINT = obj({ key: 'any', value: 'any', effect: 'any', timeAdded: 'any' });

/** `spec.disruption` (and the handover annotation, which takes the same object). */
export const DISRUPTION_SHAPE: Shape = obj({
  consolidateAfter: 'any',
  consolidationPolicy: 'any',
  budgets: list(obj({ nodes: 'any', schedule: 'any', duration: 'any', reasons: 'any' })),
  // Product extensions: the grace period (Karpenter's consolidationGracePeriod design) and the savings
  // threshold (Karpenter's savings-threshold design).
  consolidationGracePeriod: 'any',
  consolidationSavingsThresholdCents: 'any',
});

/** ObjectMeta: what the API server accepts there (it checks these itself, the CRD does not list them). */
const OBJECT_META = obj({
  name: 'any',
  generateName: 'any',
  namespace: 'any',
  selfLink: 'any',
  uid: 'any',
  resourceVersion: 'any',
  generation: 'any',
  creationTimestamp: 'any',
  deletionTimestamp: 'any',
  deletionGracePeriodSeconds: 'any',
  labels: 'any',
  annotations: 'any',
  ownerReferences: 'any',
  finalizers: 'any',
  managedFields: 'any',
});

export const NODE_POOL_SHAPE: Shape = obj({
  apiVersion: 'any',
  kind: 'any',
  metadata: OBJECT_META,
  spec: obj({
    template: obj({
      metadata: obj({ labels: 'any', annotations: 'any' }),
      spec: obj({
        nodeClassRef: obj({ group: 'any', kind: 'any', name: 'any' }),
        requirements: list(obj({ key: 'any', operator: 'any', values: 'any', minValues: 'any' })),
        taints: list(TAINT),
        startupTaints: list(TAINT),
        expireAfter: 'any',
        terminationGracePeriod: 'any',
      }),
    }),
    disruption: DISRUPTION_SHAPE,
    limits: 'any',
    weight: 'any',
    replicas: 'any',
  }),
  // Written by Karpenter; a `kubectl get -o yaml` dump carries it.
  status: 'any',
});

/**
 * Fields that older Karpenter versions had and v1 moved: the error says where they went, because that
 * is the fix the user needs.
 */
const MOVED: Readonly<Record<string, string>> = {
  'spec.disruption.expireAfter': 'moved to spec.template.spec.expireAfter in karpenter.sh/v1',
  'spec.template.spec.kubelet': 'moved to the EC2NodeClass (spec.kubelet) in karpenter.sh/v1; this product does not read kubelet settings',
  'spec.template.spec.nodeClassRef.apiVersion': 'karpenter.sh/v1 names the group instead (group: karpenter.k8s.aws, kind: EC2NodeClass)',
  'spec.template.spec.resources': 'is not a NodePool field (NodeClaims have it; a NodePool cannot set requests)',
};

/**
 * Fails on the first field the tree does not know, naming its path. Lists are walked item by item;
 * values of the wrong type are left to the readers, which say what they expected.
 */
/** Why an unknown field of a NodePool is refused. */
export const REFUSED_BY_API_SERVER = "Karpenter v1.14's NodePool has no such field, and the API server would refuse it";

export function rejectUnknownFields(f: Fields, value: unknown, shape: Shape, path: string, why: string = REFUSED_BY_API_SERVER): void {
  if (shape === 'any') return;
  if ('items' in shape) {
    if (!Array.isArray(value)) return;
    value.forEach((item, i) => rejectUnknownFields(f, item, shape.items, `${path}[${i}]`, why));
    return;
  }
  if (!isRecord(value)) return;
  for (const [key, child] of Object.entries(value)) {
    const childPath = joinPath(path, key);
    const known = Object.hasOwn(shape.fields, key) ? shape.fields[key] : undefined;
    if (known === undefined) {
      const generic = genericPath(childPath);
      const moved = MOVED[generic];
      if (moved) f.fail(childPath, moved);
      const guess = closest(key, Object.keys(shape.fields));
      f.fail(childPath, `unknown field${guess ? ` (did you mean ${show(guess)}?)` : ''}; ${why}`);
    }
    rejectUnknownFields(f, child, known, childPath, why);
  }
}

/** `spec.template.spec.requirements[3].minValue` -> `spec.template.spec.requirements.minValue`. */
function genericPath(path: string): string {
  return path.replace(/\[\d+\]/g, '');
}

