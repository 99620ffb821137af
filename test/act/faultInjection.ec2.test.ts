// Fault injection at every step boundary of the ec2 actuator (scenarios and invariants: faultInjection.ts).
// `SHOW_FAULT_TABLE=1` prints the table.
import { SCENARIOS, describeFaultInjection } from './faultInjection.ts';

describeFaultInjection(SCENARIOS.filter((s) => s.karpenter === undefined));
