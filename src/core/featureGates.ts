// Karpenter's feature-gate syntax: `Name=true,Other=false` (CONTRACT section 1). Only the gates the
// product knows are accepted, so that a typo is an error rather than a silent no-op.
import { InputError } from './errors.ts';

export interface FeatureGates {
  /** Spot nodes may be replaced by cheaper spot nodes (single-node only). Default off, as in Karpenter. */
  readonly spotToSpotConsolidation: boolean;
}

export const defaultFeatureGates: FeatureGates = { spotToSpotConsolidation: false };

const KNOWN: Record<string, keyof FeatureGates> = { SpotToSpotConsolidation: 'spotToSpotConsolidation' };

/** Parses `--feature-gates` / `FEATURE_GATES`; `source` names the flag or variable in errors. */
export function parseFeatureGates(text: string | undefined, source = '--feature-gates'): FeatureGates {
  const gates: { -readonly [K in keyof FeatureGates]: FeatureGates[K] } = { ...defaultFeatureGates };
  if (text === undefined || text.trim() === '') return gates;
  for (const part of text.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const match = /^([A-Za-z0-9]+)=(true|false)$/i.exec(item);
    if (!match) throw new InputError('', source, `"${item}" is not NAME=true|false`);
    const key = KNOWN[match[1]!];
    if (!key) throw new InputError('', source, `unknown feature gate "${match[1]}" (known: ${Object.keys(KNOWN).join(', ')})`);
    gates[key] = match[2]!.toLowerCase() === 'true';
  }
  return gates;
}
