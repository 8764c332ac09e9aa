import { describe, expect, it } from 'vitest';
import type { HttpService } from '../src/transport/http.js';
import { captured } from './support/key-scan.js';
import { sandbox } from './support/sandbox.js';
import { codeFor, form, REDIRECT, signInService, toolNames } from './support/sign-in.js';

/**
 * A refresh asks the firm's identity provider again (src/auth/federation.ts, renew): if its answer
 * names another person than the one who signed in, the refresh is refused, so one person's session
 * never becomes another's. Against the real service and the real demo identity provider
 * (oidc-provider on loopback), made to answer for another person after sign-in.
 */

const sb = await sandbox();

type TokenBody = { error?: string; error_description?: string; access_token?: string; refresh_token?: string };

async function token(svc: HttpService, fields: Record<string, string>) {
  const res = await fetch(`${svc.url}/token`, form(fields));
  const body = (await res.json()) as TokenBody;
  captured.push(JSON.stringify(body));
  return { status: res.status, body };
}

describe('a refresh where the identity provider answers for another person', () => {
  it('is refused (invalid_grant) and the session ended; while it names the person who signed in, refreshes work', async () => {
    const lines: string[] = [];
    // Whom the demo identity provider answers for, per person; changed below, after sign-in.
    const answering = new Map<string, string>();
    const svc = await signInService(sb, { lines, idp: { answerAs: (email) => answering.get(email) } });

    const c = await codeFor(svc, 'reader@demo.example', 'reader-demo');
    const first = await token(svc, {
      grant_type: 'authorization_code',
      code: c.code,
      code_verifier: c.verifier,
      client_id: c.clientId,
      redirect_uri: REDIRECT,
    });
    expect(first.status).toBe(200);
    const refresh = (refreshToken: string) => token(svc, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: c.clientId });

    // The provider names the same person: as by default, and when answering for them explicitly.
    const same = await refresh(first.body.refresh_token!);
    expect(same.status).toBe(200);
    answering.set('reader@demo.example', 'reader@demo.example');
    const sameAgain = await refresh(same.body.refresh_token!);
    expect(sameAgain.status).toBe(200);
    const names = await toolNames(svc, sameAgain.body.access_token!);
    expect(names).toContain('list_clients');
    expect(names).not.toContain('create_request'); // still the reader

    // Now it answers the reader's refresh for the sender (another person, whom the firm lets send).
    answering.set('reader@demo.example', 'sender@demo.example');
    expect(await refresh(sameAgain.body.refresh_token!)).toEqual({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'The identity provider answered for another person: sign in again.' },
    });
    // The reader's session did not become the sender's, and it is ended: its last access token no longer lets anyone in.
    expect(lines.filter((l) => l.includes('"audit":"role changed"'))).toEqual([]);
    expect(await toolNames(svc, sameAgain.body.access_token!)).toBe(401);
  });
});
