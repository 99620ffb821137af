// Go durations -> milliseconds, and the `Never` spelling.
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import {
  isNever,
  parseDurationOrNever,
  parseGoDuration,
  parseGoDurationDetailed,
  parseNonNegativeDuration,
} from '../../src/core/input/duration.ts';

describe('parseGoDuration', () => {
  it.each([
    ['seconds', '30s', 30_000],
    ['minutes', '5m', 300_000],
    ['hours and minutes', '1h30m', 5_400_000],
    ['thirty days in hours', '720h', 2_592_000_000],
    ['fractional hours', '1.5h', 5_400_000],
    ['a tenth of an hour is exact', '0.1h', 360_000],
    ['milliseconds', '300ms', 300],
    ['zero with a unit', '0s', 0],
    ['bare zero', '0', 0],
    ['Go printed form', '1h0m0s', 3_600_000],
    ['leading dot', '.5s', 500],
    ['microseconds', '1500us', 1.5],
    ['micro sign', '1000µs', 1],
    ['nanoseconds', '1ns', 0.000001],
    ['explicit plus', '+2m', 120_000],
    ['negative', '-1m', -60_000],
    ['units in any order', '30s1h', 3_630_000],
  ])('%s: %s', (_name, text, ms) => {
    expect(parseGoDuration(text)).toBe(ms);
  });

  it.each([
    ['empty', ''],
    ['no unit', '10'],
    ['unknown unit', '1d'],
    ['upper-case unit', '1H'],
    ['space', '1h 30m'],
    ['word', 'soon'],
    ['sign only', '-'],
    ['dot only', '.s'],
    ['longer than Go allows', '9999999999h'],
  ])('%s (%j) is rejected', (_name, text) => {
    expect(() => parseGoDuration(text)).toThrow(InputError);
    expect(() => parseGoDuration(text)).toThrow('is not a duration');
  });

  it('keeps the components so callers can apply unit rules', () => {
    expect(parseGoDurationDetailed('1h30m').components).toEqual([
      { number: '1', unit: 'h' },
      { number: '30', unit: 'm' },
    ]);
  });
});

describe('non-negative and Never', () => {
  it('rejects negative durations where a wait is expected', () => {
    expect(() => parseNonNegativeDuration('-5m')).toThrow('must not be negative');
  });

  it.each([
    ['Never', 'Never', null],
    ['a duration', '10m', 600_000],
    ['YAML zero', 0, 0],
  ])('parseDurationOrNever: %s', (_name, value, expected) => {
    expect(parseDurationOrNever(value)).toBe(expected);
  });

  it.each([
    ['never (wrong case)', 'never'],
    ['a number other than zero', 30],
    ['negative', '-1s'],
    ['a list', ['5m']],
  ])('parseDurationOrNever rejects %s', (_name, value) => {
    expect(() => parseDurationOrNever(value)).toThrow(InputError);
  });

  it('isNever only matches the exact word', () => {
    expect(isNever('Never')).toBe(true);
    expect(isNever('never')).toBe(false);
  });
});
