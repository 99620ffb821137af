// A small IAM policy evaluator for the tests of our own policy: enough of IAM's rules to say whether
// the functions' policy allows one request, and to fail loudly on anything it does not understand
// (an unknown condition operator is an error, not a silent "allowed").
//
// What it models: Allow and Deny statements; Action and Resource with `*` and `?` wildcards (actions
// case-insensitively); conditions StringEquals, StringLike and their IfExists forms, with several
// values ORed and several keys and operators ANDed; keys aws:RequestTag/<k>, aws:ResourceTag/<k> and
// any other key from the request's context. A missing key fails the condition (IfExists: passes).
// What it does not: NotAction/NotResource, policy variables, other operators, SCPs, boundaries.
export interface PolicyStatement {
  readonly Sid?: string;
  readonly Effect: 'Allow' | 'Deny';
  readonly Action: string | readonly string[];
  readonly Resource: string | readonly string[];
  readonly Condition?: Readonly<Record<string, Readonly<Record<string, string | readonly string[]>>>>;
}

export interface PolicyDocument {
  readonly Version: string;
  readonly Statement: readonly PolicyStatement[];
}

/** One authorization EC2 (or IAM) would ask for: an action on one resource, with its condition keys. */
export interface AuthorizationRequest {
  readonly action: string;
  readonly resource: string;
  readonly requestTags?: Readonly<Record<string, string>>;
  readonly resourceTags?: Readonly<Record<string, string>>;
  readonly context?: Readonly<Record<string, string>>;
}

export interface Verdict {
  readonly allowed: boolean;
  /** The statements that allowed it (or the one that denied it). */
  readonly by: readonly string[];
}

const list = (value: string | readonly string[]): readonly string[] => (typeof value === 'string' ? [value] : value);

function wildcard(pattern: string, caseInsensitive: boolean): RegExp {
  const escaped = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`, caseInsensitive ? 'i' : '');
}

function keyValue(request: AuthorizationRequest, key: string): string | undefined {
  const lower = key.toLowerCase();
  if (lower.startsWith('aws:requesttag/')) return request.requestTags?.[key.slice('aws:RequestTag/'.length)];
  if (lower.startsWith('aws:resourcetag/')) return request.resourceTags?.[key.slice('aws:ResourceTag/'.length)];
  const match = Object.entries(request.context ?? {}).find(([k]) => k.toLowerCase() === lower);
  return match?.[1];
}

function conditionHolds(operator: string, key: string, expected: readonly string[], request: AuthorizationRequest): boolean {
  const ifExists = operator.endsWith('IfExists');
  const base = ifExists ? operator.slice(0, -'IfExists'.length) : operator;
  const actual = keyValue(request, key);
  if (actual === undefined) return ifExists;
  switch (base) {
    case 'StringEquals':
      return expected.includes(actual);
    case 'StringLike':
      return expected.some((pattern) => wildcard(pattern, false).test(actual));
    default:
      throw new Error(`the test's IAM evaluator does not know the condition operator ${operator}`);
  }
}

function applies(statement: PolicyStatement, request: AuthorizationRequest): boolean {
  if (!list(statement.Action).some((a) => wildcard(a, true).test(request.action))) return false;
  if (!list(statement.Resource).some((r) => wildcard(r, false).test(request.resource))) return false;
  for (const [operator, keys] of Object.entries(statement.Condition ?? {})) {
    for (const [key, values] of Object.entries(keys)) {
      if (!conditionHolds(operator, key, list(values), request)) return false;
    }
  }
  return true;
}

/** IAM's order: an explicit Deny wins, then any Allow, else the implicit deny. */
export function evaluate(policy: PolicyDocument, request: AuthorizationRequest): Verdict {
  const matching = policy.Statement.filter((s) => applies(s, request));
  const deny = matching.find((s) => s.Effect === 'Deny');
  if (deny !== undefined) return { allowed: false, by: [deny.Sid ?? '(deny)'] };
  const allows = matching.filter((s) => s.Effect === 'Allow');
  return { allowed: allows.length > 0, by: allows.map((s) => s.Sid ?? '(allow)') };
}
