// The instance-type catalog (docs/file-formats.md, "The catalog"): what can be launched, how big it is,
// what it costs.
//
// - `allocatable` may be omitted; it is then derived from `capacity` with EKS overheads (overhead.ts).
//   When given, it is taken as is (never above capacity), and any resource present in capacity but
//   missing from it is derived.
// - Well-known labels are derived from the name and capacity (instanceLabels.ts); `labels` wins.
// - `price` is dollars per hour, positive; `available` defaults to true. An offering that is not
//   listed does not exist, so a duplicate (same zone and capacity type) is a contradiction: rejected.
import type { CapacityType, Catalog, InstanceType, Offering, Resources } from '../model/types.ts';
import { LabelKeys } from '../model/types.ts';
import { parseResources } from '../quantity.ts';
import { Fields, isRecord, show } from './fields.ts';
import { instanceLabels } from './instanceLabels.ts';
import { EARLIEST_TIME_MS, LATEST_TIME_MS } from './time.ts';
import { deriveAllocatable } from './overhead.ts';

const CAPACITY_TYPES: readonly CapacityType[] = ['on-demand', 'spot'];

function instanceTypeObject(raw: unknown, index: number): string {
  const name = isRecord(raw) ? raw['name'] : undefined;
  return typeof name === 'string' && name !== '' ? `InstanceType "${name}"` : `instanceTypes[${index}]`;
}

const MAX_PRICE_PER_HOUR = 1_000_000;

function parseOffering(f: Fields, raw: unknown, path: string): Offering {
  const o = f.record(raw, path);
  const zone = f.string(o['zone'], `${path}.zone`);
  const capacityType = f.oneOf(o['capacityType'], `${path}.capacityType`, CAPACITY_TYPES);
  const price = o['price'];
  // No instance costs anywhere near a million dollars an hour; a larger number is a mistake, and sums of
  // such prices would stop being exact. Nor is any free: a price of 0 is a price nobody knew, and a free
  // replacement would look like a saving of everything the node costs.
  if (typeof price !== 'number' || !Number.isFinite(price) || price <= 0 || price >= MAX_PRICE_PER_HOUR) {
    f.fail(`${path}.price`, price === undefined ? 'is required' : `${show(price)} must be a positive number of US dollars per hour below ${MAX_PRICE_PER_HOUR}`);
  }
  const available = f.optBoolean(o['available'], `${path}.available`) ?? true;
  const priceIsEstimate = f.optBoolean(o['priceIsEstimate'], `${path}.priceIsEstimate`);
  return {
    zone,
    capacityType,
    pricePerHour: price,
    available,
    ...(priceIsEstimate === undefined ? {} : { priceIsEstimate }),
  };
}

function parseInstanceType(raw: unknown, index: number): InstanceType {
  const path = `instanceTypes[${index}]`;
  const f: Fields = new Fields(instanceTypeObject(raw, index));
  const t = f.record(raw, path);
  const name = f.string(t['name'], `${path}.name`);
  const capacity: Resources = parseResources(f.record(t['capacity'], `${path}.capacity`), `${path}.capacity`, f.object);
  for (const required of ['cpu', 'memory']) {
    if (capacity[required] === undefined) f.fail(`${path}.capacity.${required}`, 'is required');
  }
  const labels = instanceLabels(name, capacity, f.stringMap(t['labels'], `${path}.labels`));
  const derived = deriveAllocatable(capacity, labels[LabelKeys.arch]);
  const listed = t['allocatable'] === undefined || t['allocatable'] === null
    ? undefined
    : parseResources(f.record(t['allocatable'], `${path}.allocatable`), `${path}.allocatable`, f.object);
  // A machine cannot hand its pods more than it has: allocatable above capacity is a typo (Gi for Mi).
  for (const [resource, amount] of Object.entries(listed ?? {})) {
    const total = capacity[resource];
    if (total !== undefined && amount > total) {
      const raw = (t['allocatable'] as Record<string, unknown>)[resource];
      const rawTotal = (t['capacity'] as Record<string, unknown>)[resource];
      f.fail(`${path}.allocatable.${resource}`, `${show(raw)} is more than its capacity ${show(rawTotal)}`);
    }
  }
  const allocatable: Resources = listed ? { ...derived, ...listed } : derived;

  const offerings = f.array(t['offerings'], `${path}.offerings`).map((o, i) => parseOffering(f, o, `${path}.offerings[${i}]`));
  const seen = new Map<string, number>();
  offerings.forEach((o, i) => {
    const key = `${o.zone}/${o.capacityType}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      f.fail(`${path}.offerings[${i}]`, `duplicate offering for ${o.capacityType} in ${o.zone} (also offerings[${earlier}])`);
    }
    seen.set(key, i);
  });
  return { name, capacity, allocatable, labels, offerings };
}

/** Parses a decoded catalog document. Throws InputError naming the instance type and the field. */
export function parseCatalog(json: unknown): Catalog {
  const f: Fields = new Fields('Catalog');
  const root = f.record(json, '');
  // The region names the prices; a catalog without one still works, it just cannot say where.
  const region = f.optString(root['region'], 'region') ?? '';
  const source = f.optString(root['source'], 'source');
  // When the prices were taken: an RFC 3339 text, or epoch milliseconds.
  const asOfRaw = root['pricesAsOf'];
  if (typeof asOfRaw === 'number' && !(Number.isFinite(asOfRaw) && asOfRaw >= EARLIEST_TIME_MS && asOfRaw < LATEST_TIME_MS)) {
    f.fail('pricesAsOf', `${show(asOfRaw)} is not epoch milliseconds between 1970 and 9000`);
  }
  const pricesAsOf = typeof asOfRaw === 'number' ? asOfRaw : f.optTimestamp(asOfRaw, 'pricesAsOf');

  const instanceTypes = f.array(root['instanceTypes'], 'instanceTypes').map(parseInstanceType);
  const firstIndex = new Map<string, number>();
  instanceTypes.forEach((t, i) => {
    const earlier = firstIndex.get(t.name);
    if (earlier !== undefined) {
      throw new Fields(`InstanceType "${t.name}"`).fail(`instanceTypes[${i}].name`, `duplicate instance type (also instanceTypes[${earlier}])`);
    }
    firstIndex.set(t.name, i);
  });

  return {
    region,
    instanceTypes,
    ...(source === undefined ? {} : { source }),
    ...(pricesAsOf === undefined ? {} : { pricesAsOf }),
  };
}
