import type { IncomingMessage } from 'node:http';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { resourceGuard, signAccessToken } from '../src/auth/access-token.js';
import { decide, parseRules, personFrom } from '../src/auth/policy.js';
import type { Session } from '../src/auth/types.js';
import { MemoryStore } from '../src/store/memory.js';

/**
 * Who may read and who may send (src/auth/policy.ts), and the check of each /mcp bearer token
 * (src/auth/access-token.ts), exactly: which claims count, which rules parse, what each refusal says.
 */
describe('personFrom: only what the person cannot change', () => {
  it('an e-mail counts when verified (true, "true" or 1, or Entra ID\'s xms_edov), trimmed and lower-cased', () => {
    for (const verified of [{ email_verified: true }, { email_verified: 'true' }, { email_verified: 1 }, { xms_edov: true }, { xms_edov: 'true' }]) {
      expect(personFrom({ email: ' Ana@Firm.EXAMPLE ', ...verified }), JSON.stringify(verified)).toMatchObject({
        email: 'ana@firm.example',
        unverifiedEmail: false,
      });
    }
    for (const unverified of [{}, { email_verified: false }, { email_verified: 'yes' }, { email_verified: 2 }, { xms_edov: 'false' }]) {
      expect(personFrom({ email: 'ana@firm.example', ...unverified }), JSON.stringify(unverified)).toMatchObject({ email: undefined, unverifiedEmail: true });
    }
    expect(personFrom({ email: 'not-an-address', email_verified: true })).toMatchObject({ email: undefined, unverifiedEmail: false });
    expect(personFrom({ email: 42, email_verified: true })).toMatchObject({ email: undefined, unverifiedEmail: false });
  });

  it('ids: sub and oid when non-empty strings; groups: the strings of a list', () => {
    expect(personFrom({ sub: 's1', oid: 'o1' }).ids).toEqual(['s1', 'o1']);
    expect(personFrom({ sub: '', oid: 7 }).ids).toEqual([]);
    expect(personFrom({ groups: ['g1', 2, null, 'g2'] }).groups).toEqual(['g1', 'g2']);
    expect(personFrom({ groups: 'g1' }).groups).toEqual([]);
    expect(personFrom({}).groups).toEqual([]);
  });
});

describe('parseRules', () => {
  it('group:, user:, @domain and addresses; kinds in any case; empty entries skipped', () => {
    expect(parseRules(' GROUP:G-1 , user:Abc,, @Firm.Example, Ana@Firm.Example ,')).toEqual({
      rules: ['group:G-1', 'user:Abc', '@firm.example', 'ana@firm.example'],
      problems: [],
    });
    expect(parseRules(undefined)).toEqual({ rules: [], problems: [] });
  });

  it('anything else is a problem, named (up to 80 characters)', () => {
    const bad = [
      'group:',
      'user:',
      'xgroup:1',
      'xuser:1',
      '@firm',
      '@firm.example/x',
      'x@firm.example y',
      'a b@firm.example',
      'firm.example',
      `@${'a'.repeat(90)}`,
    ];
    const { rules, problems } = parseRules(bad.join(','));
    expect(rules).toEqual([]);
    expect(problems).toEqual(bad.map((b) => `"${b.slice(0, 80)}" is not @domain, an e-mail address, user:ID or group:ID`));
  });
});

describe('decide', () => {
  const policy = { senders: ['@firm.example', 'group:senders'], readers: ['ana@other.example', 'user:u-9'] };
  const person = (claims: Record<string, unknown>) => personFrom({ email_verified: true, ...claims });

  it('a sender by domain (not a subdomain) or group; a reader by address or id; a sender may be both', () => {
    expect(decide(policy, person({ email: 'bob@firm.example' }))).toEqual({ role: 'sender' });
    expect(decide(policy, person({ email: 'bob@sub.firm.example' }))).toHaveProperty('refused');
    expect(decide(policy, person({ email: 'x@y.example', groups: ['senders'] }))).toEqual({ role: 'sender' });
    expect(decide(policy, person({ email: 'ana@other.example' }))).toEqual({ role: 'reader' });
    expect(decide(policy, person({ email: 'anna@other.example' }))).toHaveProperty('refused');
    // An address rule is the whole address, not an ending of one.
    expect(decide(policy, person({ email: 'hana@other.example' }))).toHaveProperty('refused');
    expect(decide(policy, person({ sub: 'u-9' }))).toEqual({ role: 'reader' });
    expect(decide({ senders: ['user:u-9'], readers: ['user:u-9'] }, person({ sub: 'u-9' }))).toEqual({ role: 'sender' });
  });

  it('refused, saying why: an unverified address, or an account not on the list', () => {
    expect(decide(policy, personFrom({ email: 'bob@firm.example' }))).toEqual({
      refused: "your identity provider has not verified this e-mail address, so it cannot be matched against the firm's list.",
    });
    expect(decide(policy, person({ email: 'eve@elsewhere.example' }))).toEqual({
      refused: 'this firm has not allowed your account (by address, domain, user or group) to use Document Requests.',
    });
  });
});

describe('the bearer token check of /mcp', () => {
  const secret = new Uint8Array(32).fill(7);
  const issuer = 'http://127.0.0.1:1';
  const resource = `${issuer}/mcp`;
  const store = new MemoryStore();
  const guard = resourceGuard({ secret, issuer, resource, resourceMetadataUrl: `${issuer}/.well-known/oauth-protected-resource/mcp`, apiKey: 'KEY', store });
  const session = (over: Partial<Session> = {}): Session => ({
    clientId: 'c',
    resource,
    scope: 'docreq',
    identity: { email: 'bob@firm.example', sub: 'u-1', role: 'sender' },
    person: personFrom({}),
    app: 'app',
    started: Date.now(),
    expires: Date.now() + 3_600_000,
    family: 'fam-1',
    slot: '',
    ...over,
  });
  const check = (authorization?: string) => guard({ headers: authorization === undefined ? {} : { authorization } } as IncomingMessage);
  const challenge = `Bearer resource_metadata="${issuer}/.well-known/oauth-protected-resource/mcp", scope="docreq"`;
  const refused = (description: string) => ({
    ok: false,
    status: 401,
    wwwAuthenticate: `${challenge}, error="invalid_token", error_description="${description}"`,
    message: `Unauthorized: ${description}.`,
  });

  it('no header: the challenge that says where to sign in', async () => {
    expect(await check()).toEqual({
      ok: false,
      status: 401,
      wwwAuthenticate: challenge,
      message: 'Unauthorized: sign in with your firm account (OAuth); this server publishes how at /.well-known/oauth-protected-resource/mcp.',
    });
  });

  it('a good token, however the scheme is spelt and spaced; its role as signed (anything but sender reads)', async () => {
    const token = await signAccessToken({ secret, issuer }, session(), 60);
    for (const header of [`Bearer ${token}`, `bearer ${token}`, `Bearer   ${token}  `]) {
      expect(await check(header), header).toEqual({ ok: true, identity: { email: 'bob@firm.example', sub: 'u-1', role: 'sender' }, apiKey: 'KEY' });
    }
    const reader = await signAccessToken({ secret, issuer }, session({ identity: { email: 'r@firm.example', sub: 'u-2', role: 'reader' } }), 60);
    expect(await check(`Bearer ${reader}`)).toMatchObject({ ok: true, identity: { role: 'reader' } });
    const odd = await signAccessToken({ secret, issuer }, session({ identity: { email: 'o@firm.example', sub: 'u-3', role: 'admin' as 'reader' } }), 60);
    expect(await check(`Bearer ${odd}`)).toMatchObject({ ok: true, identity: { role: 'reader' } });
  });

  it('malformed: another scheme, a space inside, text after it, a token over 4,096 characters', async () => {
    const token = await signAccessToken({ secret, issuer }, session(), 60);
    for (const header of [`Basic ${token}`, `Bearer ${token} x`, `Bearer a b`, `xBearer ${token}`, 'Bearer', `Bearer ${'a'.repeat(4097)}`]) {
      expect(await check(header), header.slice(0, 40)).toEqual(refused('malformed bearer token'));
    }
    expect(await check(`Bearer ${'a'.repeat(4096)}`)).toEqual(refused('the access token is not valid here'));
  });

  it('expired, for another resource, missing a claim, or signed otherwise: each refused in its words', async () => {
    const expired = await new SignJWT({ email: 'bob@firm.example', role: 'sender', fam: 'f', st: 1 })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
      .setIssuer(issuer)
      .setAudience(resource)
      .setSubject('u')
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(secret);
    expect(await check(`Bearer ${expired}`)).toEqual(refused('the access token has expired; refresh it or sign in again'));
    const elsewhere = await signAccessToken({ secret, issuer }, session({ resource: 'http://other.example/mcp' }), 60);
    expect(await check(`Bearer ${elsewhere}`)).toEqual(refused('the access token was issued for another resource'));
    const noFamily = await new SignJWT({ email: 'bob@firm.example', role: 'sender', st: 1 })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
      .setIssuer(issuer)
      .setAudience(resource)
      .setSubject('u')
      .setExpirationTime('1m')
      .sign(secret);
    expect(await check(`Bearer ${noFamily}`)).toEqual(refused('the access token is not valid here'));
    const otherSecret = await signAccessToken({ secret: new Uint8Array(32).fill(8), issuer }, session(), 60);
    expect(await check(`Bearer ${otherSecret}`)).toEqual(refused('the access token is not valid here'));
  });

  it('a session ended (revoked) refuses its token', async () => {
    const token = await signAccessToken({ secret, issuer }, session({ family: 'fam-ended' }), 60);
    await store.set('revoked:fam-ended', '1', 60_000);
    expect(await check(`Bearer ${token}`)).toEqual(refused('this session was signed out (revoked); sign in again'));
  });
});
