// Requirement sets: Kubernetes node-selector semantics on known labels, and narrowing for new nodes.
import { describe, expect, it } from 'vitest';
import type { Requirement } from '../../src/core/model/types.ts';
import {
  allowsValue,
  finiteValues,
  intersectKey,
  isSatisfiable,
  keyRequirementOf,
  labelsMatch,
  requirementSetOf,
  singleValue,
  toRequirements,
} from '../../src/core/scheduling/requirements.ts';

const labels = { zone: 'a', cpu: '4', name: 'x' };
const req = (key: string, operator: Requirement['operator'], ...values: string[]): Requirement => ({ key, operator, values });

describe('labelsMatch (existing nodes)', () => {
  it.each([
    { name: 'In with the value', r: req('zone', 'In', 'a', 'b'), matches: true },
    { name: 'In without the value', r: req('zone', 'In', 'b'), matches: false },
    { name: 'In on a missing label', r: req('gpu', 'In', '1'), matches: false },
    { name: 'NotIn without the value', r: req('zone', 'NotIn', 'b'), matches: true },
    { name: 'NotIn with the value', r: req('zone', 'NotIn', 'a'), matches: false },
    { name: 'NotIn on a missing label', r: req('gpu', 'NotIn', '1'), matches: true },
    { name: 'Exists on a present label', r: req('zone', 'Exists'), matches: true },
    { name: 'Exists on a missing label', r: req('gpu', 'Exists'), matches: false },
    { name: 'DoesNotExist on a missing label', r: req('gpu', 'DoesNotExist'), matches: true },
    { name: 'DoesNotExist on a present label', r: req('zone', 'DoesNotExist'), matches: false },
    { name: 'Gt below the value', r: req('cpu', 'Gt', '2'), matches: true },
    { name: 'Gt equal to the value', r: req('cpu', 'Gt', '4'), matches: false },
    { name: 'Gt on a non-integer label', r: req('name', 'Gt', '2'), matches: false },
    { name: 'Gt on a missing label', r: req('gpu', 'Gt', '0'), matches: false },
    { name: 'Lt above the value', r: req('cpu', 'Lt', '8'), matches: true },
    { name: 'Lt equal to the value', r: req('cpu', 'Lt', '4'), matches: false },
    { name: 'a key named like an Object property is just missing', r: req('constructor', 'Exists'), matches: false },
  ])('$name', ({ r, matches }) => {
    expect(labelsMatch(labels, r)).toBe(matches);
  });
});

describe('narrowing (new nodes)', () => {
  it.each([
    { name: 'In ∩ In keeps the common values', a: req('k', 'In', 'a', 'b'), b: req('k', 'In', 'b', 'c'), values: ['b'], satisfiable: true },
    { name: 'In ∩ In without common values is empty', a: req('k', 'In', 'a'), b: req('k', 'In', 'c'), values: [], satisfiable: false },
    { name: 'In ∩ NotIn removes values', a: req('k', 'In', 'a', 'b'), b: req('k', 'NotIn', 'a'), values: ['b'], satisfiable: true },
    { name: 'In ∩ DoesNotExist is empty', a: req('k', 'In', 'a'), b: req('k', 'DoesNotExist'), values: [], satisfiable: false },
    { name: 'NotIn ∩ DoesNotExist is met by a missing label', a: req('k', 'NotIn', 'a'), b: req('k', 'DoesNotExist'), values: [], satisfiable: true },
    { name: 'Exists ∩ DoesNotExist is empty', a: req('k', 'Exists'), b: req('k', 'DoesNotExist'), values: [], satisfiable: false },
    { name: 'In ∩ Gt keeps the larger values', a: req('k', 'In', '2', '4', '8'), b: req('k', 'Gt', '3'), values: ['4', '8'], satisfiable: true },
    { name: 'In ∩ Lt keeps the smaller values', a: req('k', 'In', '2', '4', '8'), b: req('k', 'Lt', '4'), values: ['2'], satisfiable: true },
    { name: 'Gt ∩ Lt with no integer between is empty', a: req('k', 'Gt', '3'), b: req('k', 'Lt', '4'), values: undefined, satisfiable: false },
    { name: 'Gt ∩ Lt with room stays open-ended', a: req('k', 'Gt', '3'), b: req('k', 'Lt', '10'), values: undefined, satisfiable: true },
  ])('$name', ({ a, b, values, satisfiable }) => {
    const result = intersectKey(keyRequirementOf(a), keyRequirementOf(b));
    expect(isSatisfiable(result)).toBe(satisfiable);
    const finite = finiteValues(result);
    expect(finite === undefined ? undefined : finite.sort()).toEqual(values);
  });

  it('Gt and Lt bounds apply to later values', () => {
    const bounded = intersectKey(keyRequirementOf(req('k', 'Gt', '3')), keyRequirementOf(req('k', 'Lt', '10')));
    expect(allowsValue(bounded, '5')).toBe(true);
    expect(allowsValue(bounded, '10')).toBe(false);
    expect(allowsValue(bounded, 'x')).toBe(false);
    expect(allowsValue(bounded, undefined)).toBe(false);
  });

  it('a single allowed value is known', () => {
    expect(singleValue(keyRequirementOf(req('k', 'In', 'a')))).toBe('a');
    expect(singleValue(keyRequirementOf(req('k', 'In', 'a', 'b')))).toBeUndefined();
  });

  it('repeated keys are ANDed and convert back to requirements', () => {
    const set = requirementSetOf([req('zone', 'In', 'a', 'b', 'c'), req('zone', 'NotIn', 'b'), req('cpu', 'Gt', '2'), req('gpu', 'DoesNotExist')]);
    expect(toRequirements(set)).toEqual([
      req('cpu', 'Gt', '2'),
      req('gpu', 'DoesNotExist'),
      req('zone', 'In', 'a', 'c'),
    ]);
  });
});
