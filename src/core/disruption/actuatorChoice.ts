// Which actuator carries out each pool's decisions (the plan's `actuators`):
// - `karpenter`: replacements are Karpenter NodeClaims built from the NodePool, old nodes leave by
//   deleting their NodeClaims, so every node stays in Karpenter's lifecycle (its interruption handling,
//   drift, expiry and repair go on as for the nodes it launched itself);
// - `ec2`: replacements are EC2 Fleet launches from the pool's launch template and old instances are
//   terminated directly, for pools no Karpenter serves.
// `ACTUATOR=auto` (the default) picks `karpenter` wherever Karpenter serves the pool, found the same way
// as for coexistence (coexistence.ts: KARPENTER=present, NodePools read from the cluster's API, or a
// node of the pool with Karpenter's registration labels; KARPENTER=absent means never), and `ec2`
// elsewhere. A NodeClaim needs the pool's `nodeClassRef`, as Karpenter's provisioner does to launch:
// a `karpenter` pool without one can delete nodes but cannot launch a replacement, and the plan says so.
import { InputError } from '../errors.ts';
import type { Node, NodePool } from '../model/types.ts';
import type { PoolActuator } from '../plan.ts';
import type { ActuatorKind } from '../ports/actuator.ts';
import { launchTemplateLabelKeys } from '../scheduling/launchedLabels.ts';
import { karpenterServes, type KarpenterPresence } from './coexistence.ts';

/** `ACTUATOR` / `--actuator`: `auto` chooses per pool; the others force one actuator for every pool. */
export type ActuatorSetting = 'auto' | ActuatorKind;

export interface ActuatorChoiceInput {
  /** The pools to choose for (the pass's scope). */
  readonly nodePools: readonly NodePool[];
  readonly nodes: readonly Node[];
  readonly setting: ActuatorSetting;
  readonly presence: KarpenterPresence;
  /** The NodePools came from the cluster's Kubernetes API (not from a file). */
  readonly poolsFromCluster: boolean;
}

export interface ActuatorChoice extends PoolActuator {
  readonly actuator: ActuatorKind;
}

const WHAT: Record<ActuatorKind, string> = { karpenter: 'NodeClaims', ec2: 'launch templates' };

/** `karpenter (NodeClaims)`, `ec2 (launch templates)`. */
export const describeActuator = (kind: ActuatorKind): string => `${kind} (${WHAT[kind]})`;

export function parseActuatorSetting(text: string | undefined, source = 'ACTUATOR'): ActuatorSetting {
  const value = text?.trim().toLowerCase() ?? '';
  if (value === '') return 'auto';
  if (value === 'auto' || value === 'karpenter' || value === 'ec2') return value;
  throw new InputError('', source, `"${text}" is not auto, karpenter or ec2`);
}

export function chooseActuators(input: ActuatorChoiceInput): Map<string, ActuatorChoice> {
  const served = input.setting === 'auto' ? karpenterServes(input) : new Map<string, string>();
  const choices = new Map<string, ActuatorChoice>();
  for (const pool of input.nodePools) {
    let actuator: ActuatorKind;
    let why: string;
    if (input.setting !== 'auto') {
      actuator = input.setting;
      why = `ACTUATOR=${input.setting}`;
    } else if (served.has(pool.name)) {
      actuator = 'karpenter';
      why = `Karpenter serves the pool: ${served.get(pool.name)!}`;
    } else {
      actuator = 'ec2';
      why =
        input.presence === 'absent'
          ? 'KARPENTER=absent'
          : "no sign of Karpenter for the pool (NodePools not read from the cluster's API, no node with Karpenter's registration labels)";
    }
    if (actuator === 'karpenter' && pool.nodeClaimTemplate === undefined) why = `${why}; ${NO_TEMPLATE}`;
    choices.set(pool.name, { actuator, why });
  }
  return choices;
}

const NO_TEMPLATE = 'but the NodePool has no spec.template.spec.nodeClassRef, so no replacement can be launched through Karpenter (deletions only)';

/** A plan note for each `karpenter` pool that cannot launch a replacement (no nodeClassRef). */
export function actuatorNotes(nodePools: readonly NodePool[], choices: ReadonlyMap<string, ActuatorChoice>): string[] {
  return nodePools
    .filter((pool) => choices.get(pool.name)?.actuator === 'karpenter' && pool.nodeClaimTemplate === undefined)
    .map(
      (pool) =>
        `NodePool "${pool.name}" is acted on through Karpenter NodeClaims but has no spec.template.spec.nodeClassRef: a NodeClaim needs one, so its replacements cannot be launched (its nodes can still be deleted); add the nodeClassRef or set ACTUATOR=ec2`,
    );
}

/**
 * The pools as the simulation must see them: each `ec2` pool marked with the labels its launch template
 * gives a new node (core/scheduling/launchedLabels.ts), so that no pod is planned onto a replacement
 * by a label Karpenter would have put there and the template does not. The others as they are.
 */
export function withLaunchedLabels(nodePools: readonly NodePool[], nodes: readonly Node[], choices: ReadonlyMap<string, ActuatorChoice>): NodePool[] {
  return nodePools.map((pool) => (choices.get(pool.name)?.actuator === 'ec2' ? { ...pool, launchedLabelKeys: launchTemplateLabelKeys(pool, nodes) } : pool));
}
