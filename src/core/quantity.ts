// Kubernetes resource quantities (`100m`, `1.5Gi`, `1e3`, `500M`), parsed exactly.
//
// Floating point would turn `0.1` cpu into 100.00000000000001m and `1.1Gi` into a fraction of a byte,
// and the consolidation decisions compare sums of such amounts against allocatable, so an off-by-one
// there flips a "fits" into a "does not fit". A quantity is therefore kept as an exact rational of two
// BigInts and rounded only once, when converted to the model's units: up, as Kubernetes'
// `MilliValue()` and `Value()` do (a request of 0.0001 cpu reserves 1m, not 0m).
import { InputError } from './errors.ts';
import type { Resources } from './model/types.ts';

/** An exact rational value: numerator / denominator, denominator > 0, reduced. */
export interface Quantity {
  readonly numerator: bigint;
  readonly denominator: bigint;
}

// Suffixes as `apimachinery/pkg/api/resource` knows them: decimal SI (powers of 1000, including the
// sub-unit m, u and n) and binary SI (powers of 1024). `E` alone is exa; `E3`/`e3` is an exponent.
const DECIMAL_EXPONENTS: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_POWERS: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

// Sign, integer digits, optional fraction, then a suffix checked separately. Kubernetes also accepts
// `5.` and `.5`; at least one digit is required.
const QUANTITY = /^([+-]?)(\d*)(?:\.(\d*))?(.*)$/;
const EXPONENT = /^[eE]([+-]?\d+)$/;
/** Beyond this the number is nonsense for a resource, and 10n ** n would only burn memory. */
const MAX_EXPONENT = 1000;

function notAQuantity(text: string, why?: string): InputError {
  return new InputError('', '', `${JSON.stringify(text)} is not a Kubernetes quantity${why ? ` (${why})` : ''}`);
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

function reduced(numerator: bigint, denominator: bigint): Quantity {
  const divisor = gcd(numerator, denominator);
  return divisor <= 1n ? { numerator, denominator } : { numerator: numerator / divisor, denominator: denominator / divisor };
}

/**
 * Parses a quantity exactly. Numbers (as JSON and YAML give `pods: 29` or `cpu: 0.5`) are read through
 * their shortest decimal text. Throws an InputError without object or field; callers add those.
 */
export function parseQuantity(input: string | number): Quantity {
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) throw notAQuantity(String(input));
    input = String(input);
  }
  const text = input;
  const match = QUANTITY.exec(text);
  if (text === '' || !match) throw notAQuantity(text, text === '' ? 'empty' : undefined);
  const [, sign = '', whole = '', fraction = '', suffix = ''] = match;
  if (whole === '' && fraction === '') throw notAQuantity(text, 'no digits');

  let exponent10 = -fraction.length;
  let exponent2 = 0;
  const decimal = DECIMAL_EXPONENTS[suffix];
  const binary = BINARY_POWERS[suffix];
  const scientific = EXPONENT.exec(suffix);
  if (decimal !== undefined) exponent10 += decimal;
  else if (binary !== undefined) exponent2 = binary;
  else if (scientific) {
    const exponent = Number(scientific[1]);
    if (Math.abs(exponent) > MAX_EXPONENT) throw notAQuantity(text, 'exponent out of range');
    exponent10 += exponent;
  } else {
    throw notAQuantity(text, `unknown suffix ${JSON.stringify(suffix)}`);
  }

  let numerator = BigInt(`${whole}${fraction}` || '0');
  let denominator = 1n;
  if (exponent10 >= 0) numerator *= 10n ** BigInt(exponent10);
  else denominator = 10n ** BigInt(-exponent10);
  numerator *= 2n ** BigInt(exponent2);
  if (sign === '-') numerator = -numerator;
  return reduced(numerator, denominator);
}

/** value * scale, rounded away from zero (Kubernetes' RoundUp). */
function scaledRoundedUp(q: Quantity, scale: bigint): bigint {
  const scaled = q.numerator * scale;
  const magnitude = scaled < 0n ? -scaled : scaled;
  const rounded = (magnitude + q.denominator - 1n) / q.denominator;
  return scaled < 0n ? -rounded : rounded;
}

/** The quantity in thousandths (millicores for cpu), rounded up like Kubernetes' `MilliValue()`. */
export function cpuMillis(q: Quantity): number {
  return Number(scaledRoundedUp(q, 1000n));
}

/** The quantity in whole base units (bytes, counts), rounded up like Kubernetes' `Value()`. */
export function baseUnits(q: Quantity): number {
  return Number(scaledRoundedUp(q, 1n));
}

/** True when the quantity is below zero. */
export function isNegative(q: Quantity): boolean {
  return q.numerator < 0n;
}

/** Amounts of quantity texts already parsed, by text: cpu in millicores, anything else in base units. */
const cpuMillisOfText = new Map<string, number>();
const baseUnitsOfText = new Map<string, number>();
const MAX_CACHED_QUANTITIES = 10_000;

/** One resource's amount in the model's unit (cpu: millicores), or an InputError naming the field. */
function resourceAmount(name: string, value: unknown, field: string, object: string): number {
  if (typeof value !== 'string' && typeof value !== 'number') {
    throw new InputError(object, field, `${JSON.stringify(value)} is not a Kubernetes quantity`);
  }
  let quantity: Quantity;
  try {
    quantity = parseQuantity(value);
  } catch (error) {
    if (error instanceof InputError) throw new InputError(object, field, error.problem);
    throw error;
  }
  if (isNegative(quantity)) throw new InputError(object, field, `${JSON.stringify(value)} must not be negative`);
  const amount = name === 'cpu' ? cpuMillis(quantity) : baseUnits(quantity);
  // Beyond 2^53 the model's numbers lose exactness (and 1e400 would become Infinity): no real
  // resource amount comes near (2^53 bytes is 8 PiB).
  if (!Number.isSafeInteger(amount)) {
    throw new InputError(object, field, `${JSON.stringify(value).slice(0, 60)} is too large for a resource amount`);
  }
  return amount;
}

/**
 * A map of resource quantities (`requests`, `allocatable`, `capacity`, `limits`) in the model's units:
 * cpu in millicores, everything else in base units. Negative amounts are rejected: no Kubernetes
 * resource list may hold one. `object` names the owner in errors; callers may instead add it later.
 */
export function parseResources(record: unknown, fieldPath: string, object = ''): Resources {
  if (record === undefined || record === null) return {};
  if (typeof record !== 'object' || Array.isArray(record)) {
    throw new InputError(object, fieldPath, `must be a map of resource quantities, got ${JSON.stringify(record)}`);
  }
  const out: Record<string, number> = {};
  const values = record as Record<string, unknown>;
  for (const name in values) {
    const value = values[name];
    // The same few quantities ("100m", "128Mi") recur on every pod of a dump: each text is worked out once.
    const cache = name === 'cpu' ? cpuMillisOfText : baseUnitsOfText;
    const known = typeof value === 'string' ? cache.get(value) : undefined;
    if (known !== undefined) {
      out[name] = known;
      continue;
    }
    const amount = resourceAmount(name, value, `${fieldPath}.${name}`, object);
    if (typeof value === 'string' && cache.size < MAX_CACHED_QUANTITIES) cache.set(value, amount);
    out[name] = amount;
  }
  return out;
}
