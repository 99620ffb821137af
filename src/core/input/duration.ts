// Go-style durations (`30s`, `5m`, `1h30m`, `1.5h`, `300ms`), as Karpenter's NodePool fields take them
// (docs/file-formats.md, "The NodePools"), converted to the model's milliseconds.
//
// The grammar is Go's `time.ParseDuration`: an optional sign, then one or more `<number><unit>` pairs
// with units ns, us (µs, μs), ms, s, m, h; a bare `0` is allowed. The value is summed in whole
// nanoseconds with BigInt (Go's own resolution, digits below a nanosecond are dropped as Go does) so
// `0.1h` is exactly 360000 ms. Some fields also take the word `Never`.
import { InputError } from '../errors.ts';

const NANOS_PER_UNIT: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n, // U+00B5 micro sign
  'μs': 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
/** Go durations are int64 nanoseconds: about 292 years. */
const MAX_NANOS = 2n ** 63n - 1n;
const COMPONENT = /^(\d*)(?:\.(\d*))?([^\d.]+)/;

function badDuration(text: string, why: string): InputError {
  return new InputError('', '', `${JSON.stringify(text)} is not a duration like 30s, 5m or 1h30m (${why})`);
}

/** The units used by a duration text, in order (for rules such as "no seconds in a budget"). */
export interface ParsedDuration {
  readonly ms: number;
  readonly components: readonly { readonly number: string; readonly unit: string }[];
}

/** Parses a Go duration; keeps the components so callers can apply unit rules. Throws InputError. */
export function parseGoDurationDetailed(text: string): ParsedDuration {
  if (text === '') throw badDuration(text, 'empty');
  let rest = text;
  let negative = false;
  if (rest[0] === '-' || rest[0] === '+') {
    negative = rest[0] === '-';
    rest = rest.slice(1);
  }
  if (rest === '0') return { ms: 0, components: [{ number: '0', unit: '' }] };
  if (rest === '') throw badDuration(text, 'no number');

  let nanos = 0n;
  const components: { number: string; unit: string }[] = [];
  while (rest !== '') {
    const match = COMPONENT.exec(rest);
    if (!match) {
      throw badDuration(text, /^[\d.]+$/.test(rest) ? `missing unit after ${rest}` : `unexpected ${JSON.stringify(rest)}`);
    }
    const [all, whole = '', fraction = '', unit = ''] = match;
    if (whole === '' && fraction === '') throw badDuration(text, `no number before ${JSON.stringify(unit)}`);
    const perUnit = NANOS_PER_UNIT[unit];
    if (perUnit === undefined) throw badDuration(text, `unknown unit ${JSON.stringify(unit)}`);
    const scale = 10n ** BigInt(fraction.length);
    nanos += (BigInt(whole || '0') * scale + BigInt(fraction || '0')) * perUnit / scale;
    if (nanos > MAX_NANOS) throw badDuration(text, 'too long');
    components.push({ number: `${whole}${fraction === '' ? '' : `.${fraction}`}`, unit });
    rest = rest.slice(all.length);
  }
  // Whole milliseconds exactly, then the sub-millisecond rest (only ns/us texts have one).
  const ms = Number(nanos / 1_000_000n) + Number(nanos % 1_000_000n) / 1e6;
  return { ms: negative && ms !== 0 ? -ms : ms, components };
}

/** A Go duration in milliseconds (may be fractional for sub-millisecond units, negative with `-`). */
export function parseGoDuration(text: string): number {
  return parseGoDurationDetailed(text).ms;
}

/** A duration that must not be negative: every duration field the product reads is a wait or a window. */
export function parseNonNegativeDuration(text: string): number {
  const ms = parseGoDuration(text);
  if (ms < 0) throw new InputError('', '', `${JSON.stringify(text)} must not be negative`);
  return ms;
}

export const NEVER = 'Never';

export function isNever(value: unknown): boolean {
  return value === NEVER;
}

/**
 * A duration field that also accepts `Never` (Karpenter's NillableDuration): `Never` -> null,
 * anything else a non-negative duration in ms. YAML may hand over a number for `0`; only 0 makes
 * sense without a unit, as in Go.
 */
export function parseDurationOrNever(value: unknown): number | null {
  if (isNever(value)) return null;
  if (value === 0) return 0;
  if (typeof value !== 'string') {
    throw new InputError('', '', `${JSON.stringify(value)} is not a duration like 30s, 5m or 1h30m, or Never`);
  }
  return parseNonNegativeDuration(value);
}

/** A Go duration in ms, or null when `text` is not one (annotation values such as "true"). */
export function goDurationOrNull(text: string): number | null {
  try {
    return parseGoDuration(text);
  } catch {
    return null;
  }
}
