import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSignIn } from '../src/auth/check.js';
import { startDemoIdp } from '../src/sandbox/idp.js';
import { loadAuthSetup } from '../src/auth/settings.js';
import { decide, parseRules, personFrom } from '../src/auth/policy.js';
import { childEnv, suiteFolder } from './support/folders.js';
import { captured } from './support/key-scan.js';

const BIN = new URL('../dist/cli.js', import.meta.url).pathname;
const dir = mkdtempSync(join(suiteFolder(), 'auth-'));
const KEY = 'drk_live_do_not_print_0123456789abcdef';
const OIDC_SECRET = 'oidc-secret-never-shown-0123456789';
writeFileSync(join(dir, 'key'), `${KEY}\n`);
writeFileSync(join(dir, 'oidc'), OIDC_SECRET);
writeFileSync(join(dir, 'auth'), 'a'.repeat(40));

describe('sign-in settings', () => {
  it('bearer stays the default; oauth names every missing setting, and shows no secret', async () => {
    expect((await loadAuthSetup({}, {})).mode).toBe('bearer');
    const missing = await loadAuthSetup({ auth: 'oauth' }, {});
    const text = missing.problems.join('\n');
    for (const name of ['DOCREQ_API_KEY_FILE', 'DOCREQ_OIDC_ISSUER', 'DOCREQ_OIDC_CLIENT_ID', 'DOCREQ_OIDC_CLIENT_SECRET_FILE', 'DOCREQ_AUTH_READERS'])
      expect(text).toContain(name);

    const ok = await loadAuthSetup(
      {},
      {
        DOCREQ_AUTH: 'oauth',
        DOCREQ_API_KEY_FILE: join(dir, 'key'),
        DOCREQ_OIDC_ISSUER: 'https://login.example.com',
        DOCREQ_OIDC_CLIENT_ID: 'docreq',
        DOCREQ_OIDC_CLIENT_SECRET_FILE: join(dir, 'oidc'),
        DOCREQ_AUTH_SECRET_FILE: join(dir, 'auth'),
        DOCREQ_AUTH_READERS: '@example.com',
        DOCREQ_AUTH_SENDERS: 'ann@example.com,group:senders',
      },
    );
    expect(ok.problems).toEqual([]);
    expect(ok.apiKey).toBe(KEY);
    const bad = await loadAuthSetup(
      { auth: 'oauth' },
      { DOCREQ_AUTH_READERS: 'example.com', DOCREQ_OIDC_CLIENT_SECRET_FILE: join(dir, 'nope'), DOCREQ_AUTH_REDIRECT_HOSTS: 'claude.ai,*.example.com' },
    );
    expect(bad.problems.join('\n')).toContain('"example.com" is not @domain');
    expect(bad.problems.join('\n')).toContain('DOCREQ_AUTH_REDIRECT_HOSTS must be a comma-separated list of host names');
    captured.push(JSON.stringify([missing, ok.problems, ok.notes, bad]));
    expect(JSON.stringify([missing, ok.problems, ok.notes, bad])).not.toContain(OIDC_SECRET);
  });

  it('who may read and send: domains, addresses, users and groups by id; an unverified address matches nothing', () => {
    const policy = { readers: parseRules('@firm.com').rules, senders: parseRules('boss@firm.com, group:senders, user:00u-ann').rules };
    const person = (claims: Record<string, unknown>) => decide(policy, personFrom(claims));
    expect(person({ sub: 's1', email: 'ann@firm.com', email_verified: true })).toEqual({ role: 'reader' });
    expect(person({ sub: 's2', email: 'Boss@Firm.com', email_verified: true })).toEqual({ role: 'sender' });
    expect(person({ sub: 's3', email: 'x@other.com', email_verified: true, groups: ['senders'] })).toEqual({ role: 'sender' });
    expect(person({ sub: '00u-ann' })).toEqual({ role: 'sender' });
    expect(person({ sub: 'pairwise', oid: '00u-ann' })).toEqual({ role: 'sender' });
    expect(person({ sub: 's4', email: 'ann@evilfirm.com', email_verified: true })).toHaveProperty('refused');
    expect(person({ sub: 's5', email: 'ann@firm.com.evil.com', email_verified: true })).toHaveProperty('refused');
    // Only what the provider marks verified counts: false, absent (Entra ID sends none), or a string that is not "true".
    for (const mark of [{ email_verified: false }, {}, { email_verified: 'yes' }, { xms_edov: false }]) {
      expect(person({ sub: 's6', email: 'boss@firm.com', ...mark }), JSON.stringify(mark)).toHaveProperty('refused');
    }
    expect(person({ sub: 's7', email: 'boss@firm.com', xms_edov: true })).toEqual({ role: 'sender' });
    expect(person({ sub: 's8', email: 'ann@firm.com', groups: ['Senders'] })).toHaveProperty('refused'); // group ids are exact
    expect(parseRules('user:abc, group:g1, firm.com').problems).toEqual(['"firm.com" is not @domain, an e-mail address, user:ID or group:ID']);
  });

  it.skipIf(!existsSync(BIN))('the built CLI: a key file is refused with bearer, and oauth refuses to start half-configured', () => {
    const env = { ...childEnv(), DOCREQ_API_KEY_FILE: join(dir, 'key'), DOCREQ_BASE_URL: 'http://127.0.0.1:9' };
    const bearer = spawnSync(process.execPath, [BIN, '--transport', 'http', '--port', '0'], { env, encoding: 'utf8', timeout: 10_000 });
    expect(bearer.status).toBe(2);
    expect(bearer.stderr).toContain('DOCREQ_API_KEY_FILE');
    const oauth = spawnSync(process.execPath, [BIN, '--transport', 'http', '--port', '0', '--auth', 'oauth'], { env, encoding: 'utf8', timeout: 10_000 });
    expect(oauth.status).toBe(2);
    expect(oauth.stderr).toContain('DOCREQ_OIDC_ISSUER');
    for (const out of [bearer.stdout, bearer.stderr, oauth.stdout, oauth.stderr]) expect(out).not.toContain(KEY);
  });
});

describe('check --auth oauth: what would surprise an administrator', () => {
  // Started before the tests, not while they are collected: a list of the tests (vitest list) starts nothing.
  let idp: ReturnType<typeof startDemoIdp>;
  beforeAll(() => {
    idp = startDemoIdp(['http://127.0.0.1:1/login/callback']);
  });
  afterAll(async () => (await idp).close());
  const check = async (env: Record<string, string>) => {
    const lines: string[] = [];
    const wrong = await checkSignIn(
      {},
      {
        DOCREQ_AUTH: 'oauth',
        DOCREQ_API_KEY_FILE: join(dir, 'key'),
        DOCREQ_OIDC_ISSUER: (await idp).issuer,
        DOCREQ_OIDC_CLIENT_ID: 'docreq-mcp',
        DOCREQ_OIDC_CLIENT_SECRET_FILE: join(dir, 'oidc'),
        DOCREQ_AUTH_READERS: '@example.com',
        ...env,
      },
      (l) => lines.push(l),
    );
    captured.push(...lines);
    expect(lines.join('\n')).not.toContain(OIDC_SECRET);
    return { wrong, text: lines.join('\n'), warnings: lines.filter((l) => l.startsWith('!')) };
  };

  it('warns when DOCREQ_PUBLIC_URL is unset or not https, and when a restart would sign everyone out', async () => {
    const unset = await check({});
    expect(unset.warnings).toEqual([
      expect.stringMatching(/^! DOCREQ_PUBLIC_URL is not set/),
      expect.stringMatching(/^! no DOCREQ_AUTH_SECRET_FILE .*every restart signs everyone out/),
    ]);
    expect(unset.wrong).toBe(false); // warnings: it still starts
    const http = await check({ DOCREQ_PUBLIC_URL: 'http://127.0.0.1:8787', DOCREQ_AUTH_SECRET_FILE: join(dir, 'auth') });
    expect(http.warnings).toEqual([
      '! public address http://127.0.0.1:8787 is not https: only this machine can sign in; set DOCREQ_PUBLIC_URL to the https address hosts reach',
    ]);
    const good = await check({ DOCREQ_PUBLIC_URL: 'https://mcp.example.com', DOCREQ_AUTH_SECRET_FILE: join(dir, 'auth'), DOCREQ_AUTH_SESSION_HOURS: '8' });
    expect(good.warnings).toEqual([]);
    expect(good.text).toContain('✓ tokens signed with the secret from DOCREQ_AUTH_SECRET_FILE (not shown)');
    expect(good.text).toContain('✓ sessions last 8 hours (DOCREQ_AUTH_SESSION_HOURS)');
    const bad = await check({ DOCREQ_AUTH_SESSION_HOURS: '200' });
    expect(bad.wrong).toBe(true);
    expect(bad.text).toContain('✗ sign-in: DOCREQ_AUTH_SESSION_HOURS must be a whole number of hours from 1 to 168.');
  });
});
