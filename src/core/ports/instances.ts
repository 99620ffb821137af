// Who an EC2 instance belongs to, for the interruption function: it acts only on instances this
// product launched for this cluster, never on Karpenter's or a node group's (those have their own
// interruption handling).
import type { InstanceState } from './actuator.ts';

export type InstanceOwnership =
  /** EC2 does not know the id (never existed, or terminated long ago). */
  | { readonly found: false }
  | {
      readonly found: true;
      readonly state: Exclude<InstanceState, 'notFound'>;
      /** Launched by this product for this cluster (its tags say so). */
      readonly ours: boolean;
      /** When not ours: which tag is missing or different. */
      readonly why?: string;
      readonly zone?: string;
      readonly capacityType?: 'spot' | 'on-demand';
    };

export interface InstanceDirectory {
  /** Looks the instance up by id. Throws when EC2 cannot be asked (the caller retries later). */
  ownership(instanceId: string): Promise<InstanceOwnership>;
}
