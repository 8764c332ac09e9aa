import { beforeAll, describe, expect, it } from 'vitest';
import type { HttpService } from '../src/transport/http.js';
import { sandbox } from './support/sandbox.js';
import { codeFor, form, mcpList, REDIRECT, signInService } from './support/sign-in.js';

/**
 * The token endpoint and revocation (src/auth/grants.ts), each answer exactly: a code redeemed once
 * (a second redemption withdraws what the first gave), refresh tokens rotated and used once (a reused
 * one ends the session), revocation by refresh or access token, and what is refused, in OAuth's words.
 * The real service and the demo identity provider on loopback.
 */
const sb = await sandbox();
let svc: HttpService;
beforeAll(async () => {
  svc = await signInService(sb);
});

type TokenBody = {
  error?: string;
  error_description?: string;
  access_token?: string;
  refresh_token?: string;
  token_type?: string;
  expires_in?: number;
  scope?: string;
};
const token = async (fields: Record<string, string>) => {
  const res = await fetch(`${svc.url}/token`, form(fields));
  return { status: res.status, body: (await res.json()) as TokenBody };
};
const redeem = (c: { clientId: string; verifier: string; code: string }) =>
  token({ grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, client_id: c.clientId, redirect_uri: REDIRECT });
const refresh = (clientId: string, refreshToken: string) => token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
const listsTools = async (accessToken: string) => (await mcpList(accessToken, svc)).status === 200;
const revoke = (fields: Record<string, string>) => fetch(`${svc.url}/revoke`, form(fields));
const refused = (error: string, error_description: string) => ({ status: 400, body: { error, error_description } });

describe('POST /token', () => {
  it('what is missing or unknown is refused in OAuth words, before anything is issued', async () => {
    expect(await token({ grant_type: 'authorization_code', client_id: 'x' })).toEqual(refused('invalid_request', 'code is missing.'));
    expect(await token({ grant_type: 'authorization_code', client_id: 'x', code: 'no-such-code' })).toEqual(
      refused('invalid_grant', 'The code is unknown or has expired.'),
    );
    expect(await token({ grant_type: 'refresh_token', client_id: 'x' })).toEqual(refused('invalid_request', 'refresh_token is missing.'));
    expect(await token({ grant_type: 'refresh_token', client_id: 'x', refresh_token: 'no-such-token' })).toEqual(
      refused('invalid_grant', 'The refresh token is unknown or has expired: sign in again.'),
    );
    for (const grant_type of ['password', 'client_credentials', '']) {
      expect(await token({ grant_type, client_id: 'x' }), grant_type).toEqual(
        refused('unsupported_grant_type', 'Only authorization_code and refresh_token are supported.'),
      );
    }
  });

  it('a code gives a Bearer access token for the docreq scope that lets the app in, and a refresh token', async () => {
    const c = await codeFor(svc, 'reader@demo.example', 'reader-demo');
    const first = await redeem(c);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ token_type: 'Bearer', scope: 'docreq' });
    expect(first.body.expires_in).toBeGreaterThan(60);
    expect(first.body.refresh_token).toMatch(/^\S{20,}$/);
    expect(await listsTools(first.body.access_token!)).toBe(true);
  });

  it('a code redeemed twice: refused, and what the first redemption gave is withdrawn', async () => {
    const c = await codeFor(svc, 'reader@demo.example', 'reader-demo');
    const first = await redeem(c);
    expect(first.status).toBe(200);
    expect(await redeem(c)).toEqual(refused('invalid_grant', 'The code was already used.'));
    expect(await listsTools(first.body.access_token!)).toBe(false);
    expect(await refresh(c.clientId, first.body.refresh_token!)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('a refresh rotates: a new access token that works and a new refresh token; the old one, used again, ends the session', async () => {
    const c = await codeFor(svc, 'sender@demo.example', 'sender-demo');
    const first = await redeem(c);
    const second = await refresh(c.clientId, first.body.refresh_token!);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ token_type: 'Bearer', scope: 'docreq' });
    expect(second.body.refresh_token).not.toBe(first.body.refresh_token);
    expect(second.body.access_token).not.toBe(first.body.access_token);
    expect(second.body.expires_in).toBeGreaterThan(60);
    expect(await listsTools(second.body.access_token!)).toBe(true);
    // The first refresh token again: someone holds a copy, so the whole session ends.
    expect(await refresh(c.clientId, first.body.refresh_token!)).toEqual(
      refused('invalid_grant', 'The refresh token was already used, so the session was ended: sign in again.'),
    );
    expect(await refresh(c.clientId, second.body.refresh_token!)).toEqual(refused('invalid_grant', 'This session was signed out (revoked); sign in again.'));
    expect(await listsTools(second.body.access_token!)).toBe(false);
  });
});

describe('POST /revoke', () => {
  it('no token: refused; an unknown one: 200 (RFC 7009), with no-store and any origin', async () => {
    const missing = await revoke({});
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ error: 'invalid_request', error_description: 'token is missing.' });
    const unknown = await revoke({ token: 'not-a-token' });
    expect(unknown.status).toBe(200);
    expect(unknown.headers.get('cache-control')).toBe('no-store');
    expect(unknown.headers.get('access-control-allow-origin')).toBe('*');
    expect(await unknown.text()).toBe('');
  });

  it('a refresh token ends its whole session: its access token and refresh token stop working', async () => {
    const c = await codeFor(svc, 'reader@demo.example', 'reader-demo');
    const tokens = await redeem(c);
    expect((await revoke({ token: tokens.body.refresh_token! })).status).toBe(200);
    expect(await listsTools(tokens.body.access_token!)).toBe(false);
    expect(await refresh(c.clientId, tokens.body.refresh_token!)).toEqual(refused('invalid_grant', 'This session was signed out (revoked); sign in again.'));
  });

  it('an access token ends its whole session too', async () => {
    const c = await codeFor(svc, 'reader@demo.example', 'reader-demo');
    const tokens = await redeem(c);
    expect((await revoke({ token: tokens.body.access_token! })).status).toBe(200);
    expect(await listsTools(tokens.body.access_token!)).toBe(false);
    expect(await refresh(c.clientId, tokens.body.refresh_token!)).toEqual(refused('invalid_grant', 'This session was signed out (revoked); sign in again.'));
  });
});
