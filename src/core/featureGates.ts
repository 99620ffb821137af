// Karpenter's feature-gate syntax: `Name=true,Other=false`. Only the gates the
// product knows are accepted, so that a typo is an error rather than a silent no-op.
import { InputError } from './errors.ts';

export interface FeatureGates {
  /** Spot nodes may be replaced by cheaper spot nodes (single-node only). Default off, as in Karpenter. */
  readonly spotToSpotConsolidation: boolean;
}

export const defaultFeatureGates: FeatureGates = { spotToSpotConsolidation: false };

const KNOWN: Record<string, keyof FeatureGates> = { SpotToSpotConsolidation: 'spotToSpotConsolidation' };

/**
 * Parses `--feature-gates` / `FEATURE_GATES`; `source` names the flag or variable in errors. An empty
 * (or blank) value means every gate at its default, as an unset one does: deployments set the variable
 * to "" when no gate is wanted. An empty entry between commas (`,,,`, `A=true,`) is refused, in the
 * flag and the variable alike: it is what a list built from a missing value looks like, and a gate
 * meant to be on would silently stay off.
 */
export function parseFeatureGates(text: string | undefined, source = '--feature-gates'): FeatureGates {
  const gates: { -readonly [K in keyof FeatureGates]: FeatureGates[K] } = { ...defaultFeatureGates };
  if (text === undefined || text.trim() === '') return gates;
  for (const [i, part] of text.split(',').entries()) {
    const item = part.trim();
    if (item === '') throw new InputError('', source, `${JSON.stringify(text)}: entry ${i + 1} is empty; write NAME=true|false, separated by single commas`);
    const match = /^([A-Za-z0-9]+)=(true|false)$/i.exec(item);
    if (!match) throw new InputError('', source, `"${item}" is not NAME=true|false`);
    const key = KNOWN[match[1]!];
    if (!key) throw new InputError('', source, `unknown feature gate "${match[1]}" (known: ${Object.keys(KNOWN).join(', ')})`);
    gates[key] = match[2]!.toLowerCase() === 'true';
  }
  return gates;
}
