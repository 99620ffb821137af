// Fault injection in an adversarial world, karpenter actuator against Karpenter's stand-in (the world,
// the table and the invariants: adversarialWorld.ts). `SHOW_FAULT_TABLE=1` prints the table.
import { describeAdversarial } from './adversarialWorld.ts';

describeAdversarial('karpenter');
