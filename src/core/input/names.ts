// Kubernetes' rules for names and label keys (apimachinery's validation: IsDNS1123Subdomain,
// IsQualifiedName). The API server refuses objects that break them; a hand-written file that does would
// otherwise be planned for as if Kubernetes could ever hold it, and a 100,000-character key would be
// carried through every message and comparison.
import { cut } from './fields.ts';

/** DNS-1123 subdomain: object names such as a NodePool's, and the prefix of a label key. */
const DNS_SUBDOMAIN_MAX_CHARS = 253;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** The name part of a label key (after the optional `prefix/`). */
const LABEL_NAME_MAX_CHARS = 63;
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** `text` quoted for a message, cut when long. */
function quoted(text: string): string {
  return cut(JSON.stringify(text));
}

/** What is wrong with `name` as a DNS subdomain (an object name), or undefined. */
export function dnsSubdomainProblem(name: string): string | undefined {
  if (name.length > DNS_SUBDOMAIN_MAX_CHARS) return `${quoted(name)} is ${name.length} characters long; a DNS subdomain name has at most ${DNS_SUBDOMAIN_MAX_CHARS}`;
  if (!DNS_SUBDOMAIN.test(name)) {
    return `${quoted(name)} is not a DNS subdomain name: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit`;
  }
  return undefined;
}

/**
 * What is wrong with `key` as a label key (`name` or `prefix/name`: the prefix a DNS subdomain of at
 * most 253 characters, the name at most 63 characters of letters, digits, '-', '_' and '.', starting
 * and ending with a letter or digit), or undefined.
 */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  const invalid = `${quoted(key)} is not a valid label key`;
  if (prefix !== undefined) {
    if (prefix.length > DNS_SUBDOMAIN_MAX_CHARS) return `${invalid}: its prefix is ${prefix.length} characters long, at most ${DNS_SUBDOMAIN_MAX_CHARS} are allowed`;
    if (!DNS_SUBDOMAIN.test(prefix)) return `${invalid}: its prefix must be a DNS subdomain (lowercase letters, digits, '-' and '.')`;
  }
  if (name.length > LABEL_NAME_MAX_CHARS) return `${invalid}: its name is ${name.length} characters long, at most ${LABEL_NAME_MAX_CHARS} are allowed`;
  if (!LABEL_NAME.test(name)) {
    return `${invalid}: its name must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit`;
  }
  return undefined;
}
