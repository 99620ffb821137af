// Kubernetes quantities: exact parsing, Kubernetes' rounding, and the resource maps built from them.
import { describe, expect, it } from 'vitest';
import { InputError } from '../src/core/errors.ts';
import { baseUnits, cpuMillis, parseQuantity, parseResources } from '../src/core/quantity.ts';

const Ki = 1024;
const Mi = 1024 ** 2;
const Gi = 1024 ** 3;

describe('parseQuantity: exact values', () => {
  it.each([
    ['plain integer', '2', 2n, 1n],
    ['explicit plus sign', '+1', 1n, 1n],
    ['negative', '-3', -3n, 1n],
    ['decimal', '1.5', 3n, 2n],
    ['leading dot', '.5', 1n, 2n],
    ['trailing dot', '5.', 5n, 1n],
    ['one tenth is exact', '0.1', 1n, 10n],
    ['milli', '100m', 1n, 10n],
    ['micro', '5u', 1n, 200_000n],
    ['nano', '1n', 1n, 1_000_000_000n],
    ['kilo (lower-case k)', '2k', 2000n, 1n],
    ['mega', '500M', 500_000_000n, 1n],
    ['giga', '3G', 3_000_000_000n, 1n],
    ['tera', '1T', 10n ** 12n, 1n],
    ['peta', '1P', 10n ** 15n, 1n],
    ['exa (E alone)', '1E', 10n ** 18n, 1n],
    ['kibi', '1Ki', 1024n, 1n],
    ['half a kibi', '0.5Ki', 512n, 1n],
    ['mebi', '64Mi', 64n * 2n ** 20n, 1n],
    ['gibi with fraction', '1.5Gi', 3n * 2n ** 29n, 1n],
    ['tebi', '1Ti', 2n ** 40n, 1n],
    ['pebi', '1Pi', 2n ** 50n, 1n],
    ['exbi', '1Ei', 2n ** 60n, 1n],
    ['exponent e', '1e3', 1000n, 1n],
    ['exponent E with digits', '1E3', 1000n, 1n],
    ['negative exponent', '25e-2', 1n, 4n],
    ['explicit positive exponent', '2e+2', 200n, 1n],
    ['fraction with exponent', '1.5e3', 1500n, 1n],
    ['zero', '0', 0n, 1n],
    ['leading zeros', '007', 7n, 1n],
  ])('%s: %s', (_name, text, numerator, denominator) => {
    expect(parseQuantity(text)).toEqual({ numerator, denominator });
  });

  it.each([
    ['integer', 29, 29n, 1n],
    ['fraction', 0.5, 1n, 2n],
    ['large number printed with an exponent', 1e21, 10n ** 21n, 1n],
  ])('a JSON/YAML number (%s) is read through its decimal text', (_name, value, numerator, denominator) => {
    expect(parseQuantity(value)).toEqual({ numerator, denominator });
  });
});

describe('parseQuantity: bad syntax', () => {
  it.each([
    ['empty', ''],
    ['letters', 'abc'],
    ['sign only', '-'],
    ['dot only', '.'],
    ['upper-case K', '1K'],
    ['lower-case e without digits', '1e'],
    ['unknown binary suffix', '1Ki5'],
    ['space before the suffix', '1 Gi'],
    ['two dots', '1.2.3'],
    ['fractional exponent', '1e1.5'],
    ['hex', '0x10'],
    ['huge exponent', '1e99999'],
  ])('%s (%j) is rejected', (_name, text) => {
    expect(() => parseQuantity(text)).toThrow(InputError);
    expect(() => parseQuantity(text)).toThrow('is not a Kubernetes quantity');
  });

  it('rejects non-finite numbers', () => {
    expect(() => parseQuantity(Number.NaN)).toThrow('is not a Kubernetes quantity');
  });
});

describe('cpuMillis and baseUnits round up like Kubernetes', () => {
  it.each([
    ['0.1 cpu is 100m', '0.1', 100],
    ['1.5 cpu', '1.5', 1500],
    ['100m stays 100m', '100m', 100],
    ['1930m', '1930m', 1930],
    ['a tenth of a millicore rounds up to 1m', '0.0001', 1],
    ['500u rounds up to 1m', '500u', 1],
    ['1n rounds up to 1m', '1n', 1],
    ['exponent', '2e0', 2000],
  ])('cpuMillis: %s', (_name, text, millis) => {
    expect(cpuMillis(parseQuantity(text))).toBe(millis);
  });

  it.each([
    ['1e3 is 1000', '1e3', 1000],
    ['500M is 500000000 bytes', '500M', 500_000_000],
    ['1.5Gi', '1.5Gi', 1.5 * Gi],
    ['0.5Ki', '0.5Ki', 512],
    ['8Gi', '8Gi', 8 * Gi],
    ['6903Mi', '6903Mi', 6903 * Mi],
    ['1E', '1E', 1e18],
    ['100m of a count rounds up to 1', '100m', 1],
    ['1.1 rounds up to 2', '1.1', 2],
    ['0.1Ki is 102.4 bytes, rounded up', '0.1Ki', 103],
  ])('baseUnits: %s', (_name, text, units) => {
    expect(baseUnits(parseQuantity(text))).toBe(units);
  });

  it('rounds negative values away from zero, as Kubernetes does', () => {
    expect(baseUnits(parseQuantity('-1.1'))).toBe(-2);
    expect(cpuMillis(parseQuantity('-0.0001'))).toBe(-1);
  });
});

describe('parseResources', () => {
  it('gives cpu in millicores and everything else in base units', () => {
    expect(
      parseResources(
        { cpu: '250m', memory: '1.5Gi', pods: 29, 'ephemeral-storage': '17Gi', 'nvidia.com/gpu': '1', 'hugepages-2Mi': '4Mi' },
        'status.allocatable',
      ),
    ).toEqual({ cpu: 250, memory: 1.5 * Gi, pods: 29, 'ephemeral-storage': 17 * Gi, 'nvidia.com/gpu': 1, 'hugepages-2Mi': 4 * Mi });
  });

  it('treats an absent map as empty', () => {
    expect(parseResources(undefined, 'spec.limits')).toEqual({});
    expect(parseResources(null, 'spec.limits')).toEqual({});
  });

  it.each([
    ['bad syntax', { cpu: 'abc' }, 'resources.requests.cpu', '"abc" is not a Kubernetes quantity'],
    ['negative amount', { memory: '-1Ki' }, 'resources.requests.memory', '"-1Ki" must not be negative'],
    ['a boolean', { cpu: true }, 'resources.requests.cpu', 'true is not a Kubernetes quantity'],
    ['not a map', 'lots', 'resources.requests', 'must be a map of resource quantities'],
  ])('rejects %s with the field path and the object', (_name, record, field, problem) => {
    let caught: unknown;
    try {
      parseResources(record, 'resources.requests', 'Pod default/web-0');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InputError);
    const error = caught as InputError;
    expect(error.object).toBe('Pod default/web-0');
    expect(error.field).toBe(field);
    expect(error.problem).toContain(problem);
    expect(error.message).toBe(`Pod default/web-0: ${field}: ${error.problem}`);
  });

  it('keeps kibibyte precision exactly', () => {
    expect(parseResources({ memory: '3Ki' }, 'x')).toEqual({ memory: 3 * Ki });
  });
});
