import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import type { Policy } from '../src/auth/index.js';
import type { DemoUser } from '../src/sandbox/idp.js';
import type { HttpService } from '../src/transport/http.js';
import { sandbox } from './support/sandbox.js';
import { authorizeUrl, form, REDIRECT, register, s256, signIn, signInService } from './support/sign-in.js';

/**
 * The rules of docs/sign-in.md, tried with a real OpenID Connect provider (oidc-provider) configured
 * to send claims the way Microsoft Entra ID, Google Workspace and Okta send theirs: only what a
 * person cannot change counts (a verified e-mail, the provider's ids, group ids).
 */

const sb = await sandbox();
const PASSWORD = 'pw-demo';
const user = (email: string, groups: string[] = []): DemoUser => ({ email, password: PASSWORD, name: email.split('@')[0]!, groups });

/** Signs `email` in through a service whose IdP sends `claims`; the role given, or the refusal page. */
async function outcome(svc: HttpService, email: string): Promise<{ role?: string; refused?: string; audit?: Record<string, unknown> }> {
  const reg = await register(svc, [REDIRECT]);
  const verifier = 'k'.repeat(43);
  const { location, pages } = await signIn(authorizeUrl(svc, reg.body.client_id, { code_challenge: s256(verifier) }), email, PASSWORD);
  const code = location.origin === new URL(REDIRECT).origin ? location.searchParams.get('code') : null;
  if (!code) {
    const last = pages.at(-1)!;
    expect(last.status).toBe(403);
    return { refused: last.body };
  }
  const tokens = (await (
    await fetch(
      `${svc.url}/token`,
      form({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: reg.body.client_id, redirect_uri: REDIRECT }),
    )
  ).json()) as { access_token: string };
  const payload = decodeJwt(tokens.access_token);
  return { role: String(payload.role), audit: { email: payload.email, sub: payload.sub } };
}

async function provider(users: DemoUser[], claims: (u: DemoUser) => Record<string, unknown>, policy: Policy): Promise<HttpService> {
  return signInService(sb, { policy, idp: { users, claims } });
}

describe('Microsoft Entra ID: no email_verified; a verified domain says xms_edov; groups are object ids', () => {
  const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
  const SENDERS_GROUP = '5f1c2a0e-3b7d-4e58-9a41-0c6f2d8e9b13';
  const ids: Record<string, string> = {
    'ann@firm.example': 'b1f2c3d4-0000-4000-8000-00000000000a',
    'eve@firm.example': 'b1f2c3d4-0000-4000-8000-00000000000e',
    'sam@firm.example': 'b1f2c3d4-0000-4000-8000-000000000005',
  };
  const entra = (u: DemoUser) => ({
    sub: `pairwise-${ids[u.email]!.slice(-4)}`, // Entra's sub is per app; its oid is the user's object id
    oid: ids[u.email],
    tid: TENANT,
    name: u.name,
    preferred_username: u.email,
    // The optional email claim; Eve set hers (an unverified domain, or an address she edited): no xms_edov.
    email: u.email,
    ...(u.email === 'eve@firm.example' ? {} : { xms_edov: true }),
    groups: u.groups,
  });
  const users = [user('ann@firm.example'), user('eve@firm.example'), user('sam@firm.example', [SENDERS_GROUP])];

  it('an unverified e-mail does not satisfy an @domain rule; a verified-domain one does', async () => {
    const svc = await provider(users, entra, { readers: ['@firm.example'], senders: [] });
    const eve = await outcome(svc, 'eve@firm.example');
    expect(eve.refused).toContain('has not verified this e-mail address');
    expect((await outcome(svc, 'ann@firm.example')).role).toBe('reader');
  });

  it('rules by user and group object id: a group named in words never matches, an oid does', async () => {
    const svc = await provider(users, entra, { readers: [`user:${ids['eve@firm.example']}`], senders: [`group:${SENDERS_GROUP}`, 'group:Document senders'] });
    expect((await outcome(svc, 'sam@firm.example')).role).toBe('sender');
    const eve = await outcome(svc, 'eve@firm.example');
    expect(eve.role).toBe('reader'); // by her object id, her unverified e-mail aside
    expect(eve.audit).toEqual({ email: 'eve@firm.example', sub: 'pairwise-000e' }); // named by her user name (UPN) in audit lines
    expect((await outcome(svc, 'ann@firm.example')).refused).toContain('has not allowed your account');
  });
});

describe('Google Workspace: email_verified, hd (the Workspace domain), no groups claim', () => {
  const google = (u: DemoUser) => ({
    sub: `1084${String(u.email.length).padStart(17, '0')}`, // Google's subject: a long number, as a string
    email: u.email,
    email_verified: true,
    ...(u.email.endsWith('@firm.example') ? { hd: 'firm.example' } : {}),
    name: u.name,
  });

  it('@domain rules match verified Workspace addresses; other Google accounts are refused; user: matches the numeric subject', async () => {
    const svc = await provider([user('ann@firm.example'), user('someone@gmail.example')], google, {
      readers: ['@firm.example'],
      senders: [`user:${google(user('someone@gmail.example')).sub}`],
    });
    expect((await outcome(svc, 'ann@firm.example')).role).toBe('reader');
    expect((await outcome(svc, 'someone@gmail.example')).role).toBe('sender');
    const strict = await provider([user('someone@gmail.example')], google, { readers: ['@firm.example'], senders: [] });
    expect((await outcome(strict, 'someone@gmail.example')).refused).toContain('has not allowed your account');
  });
});

describe('Okta: email_verified, groups by the groups claim filter (group names, set by Okta admins)', () => {
  const okta = (u: DemoUser) => ({
    sub: `00u${u.name.padEnd(17, 'x')}`,
    email: u.email,
    email_verified: u.email !== 'new@firm.example', // a new address the person has not confirmed yet
    preferred_username: u.email,
    name: u.name,
    groups: u.groups,
  });

  it('group:NAME matches the claim exactly; an unconfirmed address matches no @domain rule', async () => {
    const svc = await provider(
      [user('ann@firm.example', ['Everyone']), user('sam@firm.example', ['Everyone', 'DocReq Senders']), user('new@firm.example', ['Everyone'])],
      okta,
      {
        readers: ['@firm.example'],
        senders: ['group:DocReq Senders'],
      },
    );
    expect((await outcome(svc, 'ann@firm.example')).role).toBe('reader');
    expect((await outcome(svc, 'sam@firm.example')).role).toBe('sender');
    expect((await outcome(svc, 'new@firm.example')).refused).toContain('has not verified this e-mail address');
  });
});
