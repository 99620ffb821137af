// Builds the bundled instance-type catalog (docs/file-formats.md, "The catalog") from the source data in
// data/.
//
//   node --import tsx scripts/build-catalog.ts [--check] [input.json] [output.json]
//
// Input defaults to data/aws-instance-types-us-east-1.json (the repository's own copy, see
// data/README.md), output to src/adapters/catalog/bundled/catalog.json. The output is deterministic:
// the same input always gives byte-identical JSON, so a rebuild only shows up in a diff when the data
// changed. With --check nothing is written: exit 0 when the output file already holds exactly what the
// input gives, 1 when it does not.
//
// On-demand prices are the real ones from the data. The data has no spot prices, so every spot
// offering carries an estimate (see `spotPrice`) flagged with `priceIsEstimate: true`.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'] as const;

/** Spot discount bounds, in percent: the estimate takes 55% to 75% off the on-demand price. */
const MIN_DISCOUNT_PCT = 55;
const MAX_DISCOUNT_PCT = 75;

export const SOURCE =
  'aws/karpenter-provider-aws v1.14.1 (Apache-2.0): instance shapes, labels and allocatable from the generated ' +
  'reference page website/content/en/v1.14/reference/instance-types.md; us-east-1 Linux on-demand prices from the ' +
  'generated price table pkg/providers/pricing/zz_generated.pricing_aws.go, as of 2026-07-20. Spot prices are estimates.';

export const SPOT_ESTIMATE_METHOD =
  `Each spot price is the on-demand price less a discount between ${MIN_DISCOUNT_PCT}% and ${MAX_DISCOUNT_PCT}%, ` +
  'picked by a 32-bit hash (FNV-1a, then the murmur3 finalizer) of "<instance family>|<zone>", so it varies by ' +
  'family and zone but never between runs, ' +
  'and rounded to 4 decimals. It is not a market price: live spot prices come from EC2 DescribeSpotPriceHistory.';

interface SourceType {
  name: string;
  vcpu: number;
  memoryMiB: number;
  arch: string;
  labels: Record<string, string>;
  allocatable: Record<string, string>;
  onDemandPriceUSD?: number | null;
}

interface OutOffering {
  zone: string;
  capacityType: 'on-demand' | 'spot';
  price: number;
  priceIsEstimate?: true;
}

interface OutType {
  name: string;
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  labels: Record<string, string>;
  offerings: OutOffering[];
}

/**
 * 32-bit FNV-1a followed by the murmur3 finalizer, so that keys differing only in their last character
 * (us-east-1a vs us-east-1b) still land far apart. Stable across platforms and Node versions.
 */
export function stableHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

/** The instance family: the data's family label, else the part of the name before the dot. */
export function familyOf(t: Pick<SourceType, 'name' | 'labels'>): string {
  return t.labels['karpenter.k8s.aws/instance-family'] ?? t.name.split('.')[0] ?? t.name;
}

/** Estimated spot price for a family in a zone (see SPOT_ESTIMATE_METHOD). Never 0. */
export function spotPrice(onDemand: number, family: string, zone: string): number {
  const u = stableHash(`${family}|${zone}`) / 2 ** 32;
  const discount = (MIN_DISCOUNT_PCT + (MAX_DISCOUNT_PCT - MIN_DISCOUNT_PCT) * u) / 100;
  return Math.max(0.0001, round4(onDemand * (1 - discount)));
}

/** Resources that are counted, not measured: copied from allocatable into capacity as they are. */
const MEASURED = new Set(['cpu', 'memory', 'pods', 'ephemeral-storage']);

export function buildInstanceType(t: SourceType, price: number): OutType {
  const capacity: Record<string, string> = {
    cpu: String(t.vcpu),
    memory: `${t.memoryMiB}Mi`,
    pods: t.allocatable['pods'] ?? '110',
  };
  // GPUs, Neuron devices, EFA and pod ENIs: capacity equals allocatable for these.
  for (const [key, value] of Object.entries(t.allocatable)) if (!MEASURED.has(key)) capacity[key] = value;
  const family = familyOf(t);
  const offerings: OutOffering[] = [];
  for (const zone of ZONES) {
    offerings.push({ zone, capacityType: 'on-demand', price });
    offerings.push({ zone, capacityType: 'spot', price: spotPrice(price, family, zone), priceIsEstimate: true });
  }
  return { name: t.name, capacity, allocatable: { ...t.allocatable }, labels: { ...t.labels }, offerings };
}

export interface BuildResult {
  readonly json: string;
  readonly types: number;
  readonly skipped: readonly string[];
}

export function buildCatalog(source: { region?: string; instanceTypes: SourceType[] }): BuildResult {
  const skipped: string[] = [];
  const instanceTypes: OutType[] = [];
  const sorted = [...source.instanceTypes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const t of sorted) {
    const price = t.onDemandPriceUSD;
    if (typeof price !== 'number' || !Number.isFinite(price) || price <= 0) {
      skipped.push(t.name);
      continue;
    }
    instanceTypes.push(buildInstanceType(t, price));
  }
  const catalog = {
    region: source.region ?? 'us-east-1',
    source: SOURCE,
    license: 'Apache-2.0 (data derived from aws/karpenter-provider-aws v1.14.1)',
    pricesAsOf: '2026-07-20T00:00:00Z',
    spotPricesAreEstimates: true,
    spotEstimateMethod: SPOT_ESTIMATE_METHOD,
    instanceTypes,
  };
  return { json: JSON.stringify(catalog), types: instanceTypes.length, skipped };
}

/** The repository's copy of the source data and the catalog committed beside the code. */
export const DEFAULT_INPUT = 'data/aws-instance-types-us-east-1.json';
export const DEFAULT_OUTPUT = 'src/adapters/catalog/bundled/catalog.json';

function main(args: readonly string[]): void {
  const check = args.includes('--check');
  const argv = args.filter((a) => a !== '--check');
  const input = resolve(repoRoot, argv[0] ?? DEFAULT_INPUT);
  const output = resolve(repoRoot, argv[1] ?? DEFAULT_OUTPUT);
  const source = JSON.parse(readFileSync(input, 'utf8')) as { region?: string; instanceTypes: SourceType[] };
  const result = buildCatalog(source);
  if (check) {
    const same = existsSync(output) && readFileSync(output, 'utf8') === result.json;
    process.stdout.write(same ? `${output} is what ${input} gives (${result.types} instance types)\n` : `${output} differs from what ${input} gives: run without --check to rebuild it\n`);
    process.exitCode = same ? 0 : 1;
    return;
  }
  mkdirSync(dirname(output), { recursive: true });
  writeFileSync(output, result.json);
  const bytes = Buffer.byteLength(result.json);
  process.stdout.write(
    `wrote ${output}: ${result.types} instance types, ${result.skipped.length} skipped for lack of an on-demand price` +
      `${result.skipped.length ? ` (${result.skipped.join(', ')})` : ''}, ${bytes} bytes (${(bytes / 1024 / 1024).toFixed(2)} MiB)\n`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
