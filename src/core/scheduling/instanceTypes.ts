// Instance types as candidate nodes: the labels a node of the type carries and the requirement set
// they imply (instance type, arch, family ..., plus the zones and capacity types it is offered in).
import type { Catalog, InstanceType, Labels, Offering } from '../model/types.ts';
import { LabelKeys } from '../model/types.ts';
import { ABSENT, ANY, valuesIn, type KeyRequirement, type RequirementSet } from './requirements.ts';
import { CPU, MEMORY } from './resources.ts';

const AWS_PREFIX = 'karpenter.k8s.aws/';
const MiB = 1024 * 1024;

/** Keys whose value is decided by the instance type and its offering, not by the NodePool template. */
const TYPE_KEYS: ReadonlySet<string> = new Set([
  LabelKeys.instanceType,
  LabelKeys.arch,
  LabelKeys.os,
  LabelKeys.zone,
  LabelKeys.capacityType,
  LabelKeys.region,
  'beta.kubernetes.io/instance-type',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/os',
]);

/** Keys every node has even when a catalog entry forgets them; treated as "any value". */
const ALWAYS_PRESENT: ReadonlySet<string> = new Set([LabelKeys.arch, LabelKeys.os]);

export interface TypeInfo {
  readonly type: InstanceType;
  /** The type's labels completed with instance-type and (when missing) family/size/cpu/memory. */
  readonly labels: Labels;
  /** Labels as `In [value]`, zone and capacity type as the sets its available offerings span. */
  readonly requirements: RequirementSet;
  /** Available offerings, cheapest first. */
  readonly offerings: readonly Offering[];
}

export class TypeCatalog {
  readonly types: readonly TypeInfo[];
  /** The catalog's region ('' when it does not say), for messages. */
  readonly region: string;
  private readonly typeLabelKeys = new Set<string>();

  constructor(catalog: Catalog) {
    this.region = catalog.region;
    const types: TypeInfo[] = [];
    // A requirement is never changed once made, so the types share one `In [value]` per label value
    // (most values, such as "linux" or "nitro", recur on hundreds of types) and one for the region:
    // tens of thousands fewer objects to make and for the garbage collector to copy.
    const inValue = new Map<string, KeyRequirement>();
    const region = catalog.region ? valuesIn([catalog.region]) : undefined;
    for (const type of catalog.instanceTypes) {
      const offerings = type.offerings.filter((o) => o.available).sort(compareOfferings);
      if (offerings.length === 0) continue;
      const labels = completeLabels(type);
      const requirements = new Map<string, KeyRequirement>();
      // for-in over the labels' own keys, in Object.entries' order, without an array per label.
      for (const key in labels) {
        if (!Object.hasOwn(labels, key)) continue;
        const value = labels[key]!;
        this.typeLabelKeys.add(key);
        let requirement = inValue.get(value);
        if (!requirement) inValue.set(value, (requirement = valuesIn([value])));
        requirements.set(key, requirement);
      }
      requirements.set(LabelKeys.zone, valuesIn(offerings.map((o) => o.zone)));
      requirements.set(LabelKeys.capacityType, valuesIn(offerings.map((o) => o.capacityType)));
      if (region) requirements.set(LabelKeys.region, region);
      types.push({ type, labels, requirements, offerings });
    }
    this.types = types;
  }

  /** A key the instance type (not the NodePool) decides. */
  isTypeKey(key: string): boolean {
    return TYPE_KEYS.has(key) || key.startsWith(AWS_PREFIX) || this.typeLabelKeys.has(key);
  }

  /** What a node of this type may carry for `key`, as far as the type is concerned. */
  typeKey(info: TypeInfo, key: string): KeyRequirement {
    const requirement = info.requirements.get(key);
    if (requirement) return requirement;
    if (!this.isTypeKey(key)) return ANY;
    return ALWAYS_PRESENT.has(key) ? ANY : ABSENT;
  }

  /**
   * What a node may carry for `key` when its type is still open: the NodePool/pod requirement if set;
   * otherwise anything for type keys (each type then decides) and nothing for other keys, which no
   * one would put on the node.
   */
  openKey(set: RequirementSet, key: string): KeyRequirement {
    return set.get(key) ?? (this.isTypeKey(key) ? ANY : ABSENT);
  }
}

const typeCatalogs = new WeakMap<Catalog, TypeCatalog>();

/**
 * The TypeCatalog of a catalog, built once per catalog object: it depends on nothing else and is never
 * changed after construction, and callers that simulate many times on one catalog (each pass, the
 * replay's provisioner) would otherwise redo the labels of every instance type each time.
 */
export function typeCatalogOf(catalog: Catalog): TypeCatalog {
  let cached = typeCatalogs.get(catalog);
  if (!cached) {
    cached = new TypeCatalog(catalog);
    typeCatalogs.set(catalog, cached);
  }
  return cached;
}

export function compareOfferings(a: Offering, b: Offering): number {
  return (
    a.pricePerHour - b.pricePerHour ||
    (a.zone < b.zone ? -1 : a.zone > b.zone ? 1 : 0) ||
    (a.capacityType < b.capacityType ? -1 : a.capacityType > b.capacityType ? 1 : 0)
  );
}

/** Labels a node of the type would carry; EC2 naming (`m5.large`) gives family and size when the catalog does not. */
function completeLabels(type: InstanceType): Labels {
  const labels: Record<string, string> = { ...type.labels, [LabelKeys.instanceType]: type.name };
  const fill = (key: string, value: string | undefined): void => {
    if (value !== undefined && value !== '' && !Object.hasOwn(labels, key)) labels[key] = value;
  };
  const dot = type.name.indexOf('.');
  if (dot > 0) {
    fill(`${AWS_PREFIX}instance-family`, type.name.slice(0, dot));
    fill(`${AWS_PREFIX}instance-size`, type.name.slice(dot + 1));
  }
  const cpu = type.capacity[CPU];
  if (cpu !== undefined && cpu % 1000 === 0) fill(`${AWS_PREFIX}instance-cpu`, String(cpu / 1000));
  const memory = type.capacity[MEMORY];
  if (memory !== undefined && memory % MiB === 0) fill(`${AWS_PREFIX}instance-memory`, String(memory / MiB));
  return labels;
}
