// `--churn SPEC`: parsing (bad input names the flag) and the daily curve.
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { dailyFactor, NO_CHURN, parseChurn } from '../../src/core/replay/churn.ts';
import { Gi } from '../builders.ts';

describe('parseChurn', () => {
  it.each([
    ['none', NO_CHURN],
    ['daily=0.5', { ...NO_CHURN, dailyAmplitude: 0.5 }],
    ['daily=0.6,jobs=4/h', { ...NO_CHURN, dailyAmplitude: 0.6, jobsPerHour: 4 }],
    ['jobs=2/h,jobLength=1h,jobCpu=1,jobMemory=2Gi', { ...NO_CHURN, jobsPerHour: 2, jobLengthMs: 3_600_000, jobCpuMillis: 1000, jobMemoryBytes: 2 * Gi }],
    ['restarts=6/h,peak=3', { ...NO_CHURN, restartsPerHour: 6, peakHourUtc: 3 }],
  ])('reads %s', (text, expected) => {
    expect(parseChurn(text)).toEqual(expected);
  });

  it.each([
    ['daily=2', 'daily=2: expected a number from 0 to 1'],
    ['jobs=4', 'jobs=4: expected a rate such as 6/h'],
    ['storms=1', 'unknown churn model "storms"'],
    ['jobLength=soon', 'jobLength=soon: expected a positive duration'],
    ['jobCpu=lots', 'jobCpu=lots: expected a Kubernetes quantity'],
    ['daily', '"daily": expected NAME=VALUE'],
  ])('rejects %s', (text, message) => {
    expect(() => parseChurn(text)).toThrow(InputError);
    expect(() => parseChurn(text)).toThrow(message);
    expect(() => parseChurn(text)).toThrow('--churn');
  });
});

describe('dailyFactor', () => {
  const spec = { ...NO_CHURN, dailyAmplitude: 0.6, peakHourUtc: 14 };
  it.each([
    ['the peak hour', '2026-11-21T14:00:00Z', 1],
    ['twelve hours later', '2026-11-22T02:00:00Z', 0.4],
    ['six hours later', '2026-11-21T20:00:00Z', 0.7],
  ])('is right at %s', (_name, at, expected) => {
    expect(dailyFactor(spec, Date.parse(at))).toBeCloseTo(expected, 6);
  });
});
