// `--feature-gates` / FEATURE_GATES: Karpenter's syntax; unknown gates and empty
// entries refused, an empty value the same as none.
import { describe, expect, it } from 'vitest';
import { parseFeatureGates } from '../../src/core/featureGates.ts';
import { inputErrorOf } from './helpers.ts';

describe('parseFeatureGates', () => {
  it.each([
    ['nothing', undefined, false],
    ['an empty value (how deployments say "no gate")', '', false],
    ['blanks', '  ', false],
    ['the gate on', 'SpotToSpotConsolidation=true', true],
    ['the gate off, in any case', 'SpotToSpotConsolidation=FALSE', false],
    ['blanks around entries', ' SpotToSpotConsolidation=true ', true],
  ])('accepts %s', (_case, text, spotToSpot) => {
    expect(parseFeatureGates(text).spotToSpotConsolidation).toBe(spotToSpot);
  });

  it.each([
    ['only commas', ',,,', '--feature-gates', '",,,": entry 1 is empty'],
    ['a trailing comma', 'SpotToSpotConsolidation=true,', '--feature-gates', 'entry 2 is empty'],
    ['a doubled comma in the variable', 'SpotToSpotConsolidation=true,,SpotToSpotConsolidation=false', 'FEATURE_GATES', 'entry 2 is empty'],
    ['no value', 'SpotToSpotConsolidation', '--feature-gates', 'is not NAME=true|false'],
    ['an unknown gate', 'SpotToSpot=true', '--feature-gates', 'unknown feature gate "SpotToSpot"'],
  ])('refuses %s, naming the flag or variable', (_case, text, source, problem) => {
    const error = inputErrorOf(() => parseFeatureGates(text, source));
    expect(error.field).toBe(source);
    expect(error.problem).toContain(problem);
  });
});
