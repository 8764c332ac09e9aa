/**
 * Who may read and who may send: comma-separated rules, each `@domain` (an e-mail domain),
 * an e-mail address, or `group:NAME` (a value of the identity provider's groups claim).
 * A sender may also read. Nobody is let in by default.
 */
export type Role = 'reader' | 'sender';

export interface Person {
  email: string | undefined;
  emailVerified: boolean | undefined;
  groups: string[];
}

export interface Policy {
  readers: string[];
  senders: string[];
}

export function parseRules(text: string | undefined): { rules: string[]; problems: string[] } {
  const rules: string[] = [];
  const problems: string[] = [];
  for (const raw of (text ?? '').split(',')) {
    const rule = raw.trim();
    if (!rule) continue;
    if (/^group:.+/i.test(rule)) rules.push(`group:${rule.slice(6)}`);
    else if (/^@[a-z0-9.-]+\.[a-z]{2,}$/i.test(rule) || /^[^\s@,]+@[a-z0-9.-]+\.[a-z]{2,}$/i.test(rule)) rules.push(rule.toLowerCase());
    else problems.push(`"${rule.slice(0, 80)}" is not @domain, an e-mail address or group:NAME`);
  }
  return { rules, problems };
}

function matches(rules: string[], person: Person): boolean {
  const email = person.emailVerified === false ? undefined : person.email?.toLowerCase();
  return rules.some((rule) => {
    if (rule.startsWith('group:')) return person.groups.includes(rule.slice(6));
    if (!email) return false;
    return rule.startsWith('@') ? email.endsWith(rule) : email === rule;
  });
}

/** The person's role, or why they are refused (a sentence a person can act on). */
export function decide(policy: Policy, person: Person): { role: Role } | { refused: string } {
  if (matches(policy.senders, person)) return { role: 'sender' };
  if (matches(policy.readers, person)) return { role: 'reader' };
  if (person.email && person.emailVerified === false) return { refused: 'your identity provider has not verified this e-mail address, so it cannot be matched against the firm\'s list.' };
  return { refused: 'this firm has not allowed your account (by address, domain or group) to use Document Requests.' };
}
