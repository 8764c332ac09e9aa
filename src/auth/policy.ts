/**
 * Who may read and who may send: comma-separated rules, each `@domain` (a verified e-mail's domain),
 * an e-mail address (verified), `user:ID` (the identity provider's subject, or Entra ID's object id)
 * or `group:ID` (a value of the identity provider's groups claim: Entra ID sends group object ids).
 * A sender may also read. Nobody is let in by default.
 *
 * Only what the person cannot change counts (docs/sign-in.md): an e-mail only when the identity provider
 * marks it verified (`email_verified: true`, or Entra ID's verified-domain claim `xms_edov: true`; Entra
 * ID sends no `email_verified`, and its `email` claim can be edited), ids as the provider assigns them.
 * docs/sign-in.md shows which claims Entra ID, Google Workspace and Okta send.
 */
export type Role = 'reader' | 'sender';

export interface Person {
  /** The identity provider's stable ids for the person: its `sub`, and Entra ID's `oid` when sent. */
  ids: string[];
  /** The e-mail address, only when the identity provider marks it verified (lower case). */
  email: string | undefined;
  /** An e-mail address was sent but not marked verified (it matches no rule). */
  unverifiedEmail: boolean;
  groups: string[];
}

export interface Policy {
  readers: string[];
  senders: string[];
}

const truthy = (value: unknown) => value === true || value === 'true' || value === 1;

/** The facts rules are matched on, from an ID token's claims. */
export function personFrom(claims: Record<string, unknown>): Person {
  const email = typeof claims.email === 'string' && claims.email.includes('@') ? claims.email.trim().toLowerCase() : undefined;
  const verified = truthy(claims.email_verified) || truthy(claims.xms_edov);
  const ids = [claims.sub, claims.oid].filter((v): v is string => typeof v === 'string' && v.length > 0);
  const groups = Array.isArray(claims.groups) ? claims.groups.filter((g): g is string => typeof g === 'string') : [];
  return { ids, email: verified ? email : undefined, unverifiedEmail: Boolean(email) && !verified, groups };
}

export function parseRules(text: string | undefined): { rules: string[]; problems: string[] } {
  const rules: string[] = [];
  const problems: string[] = [];
  for (const raw of (text ?? '').split(',')) {
    const rule = raw.trim();
    if (!rule) continue;
    if (/^group:.+/i.test(rule)) rules.push(`group:${rule.slice(6)}`);
    else if (/^user:.+/i.test(rule)) rules.push(`user:${rule.slice(5)}`);
    else if (/^@[a-z0-9.-]+\.[a-z]{2,}$/i.test(rule) || /^[^\s@,]+@[a-z0-9.-]+\.[a-z]{2,}$/i.test(rule)) rules.push(rule.toLowerCase());
    else problems.push(`"${rule.slice(0, 80)}" is not @domain, an e-mail address, user:ID or group:ID`);
  }
  return { rules, problems };
}

function matches(rules: string[], person: Person): boolean {
  const email = person.email;
  return rules.some((rule) => {
    if (rule.startsWith('group:')) return person.groups.includes(rule.slice(6));
    if (rule.startsWith('user:')) return person.ids.includes(rule.slice(5));
    if (!email) return false;
    return rule.startsWith('@') ? email.endsWith(rule) : email === rule;
  });
}

/** The person's role, or why they are refused (a sentence a person can act on, naming no setting). */
export function decide(policy: Policy, person: Person): { role: Role } | { refused: string } {
  if (matches(policy.senders, person)) return { role: 'sender' };
  if (matches(policy.readers, person)) return { role: 'reader' };
  if (person.unverifiedEmail)
    return { refused: "your identity provider has not verified this e-mail address, so it cannot be matched against the firm's list." };
  return { refused: 'this firm has not allowed your account (by address, domain, user or group) to use Document Requests.' };
}
