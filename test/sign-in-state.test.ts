import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MemoryAuthStore, type Policy } from '../src/auth/index.js';
import { sessionsCli } from '../src/auth/sessions.js';
import { authStoreOf } from '../src/auth/store.js';
import { FileStore } from '../src/store/file.js';
import { StoreUnavailableError } from '../src/store/store.js';
import type { HttpService } from '../src/transport/http.js';
import { suiteFolder } from './support/folders.js';
import { sandbox } from './support/sandbox.js';
import { authorizeUrl, codeFor, form, REDIRECT, register, signInService } from './support/sign-in.js';

/**
 * Sign-in's state in the store, through team mode's sign-in routes against the sandbox's identity
 * provider: a consent decision is taken once even when two arrive together; a body the decision
 * cannot read is refused without using it; a store failure at /authorize is the service's, not sent
 * to the app; a refresh after the session's time limit is refused even where the store keeps its
 * token a little longer; a rotated refresh token is kept; a role changed at a refresh is what
 * `sessions list` shows, and only a change is audited; an ended session's audit line says why.
 */

const sb = await sandbox();

/** An auth store over the memory store whose reads of a consent transaction can be held until `together` of them are in, or whose writes fail. */
class HeldStore extends MemoryAuthStore {
  together = 0;
  failWrites = false;
  private waiting: (() => void)[] = [];
  override async get(key: string): Promise<string | undefined> {
    const value = await super.get(key);
    if (this.together > 1 && /^tx:[^:]+$/.test(key)) {
      await new Promise<void>((resolve) => {
        this.waiting.push(resolve);
        if (this.waiting.length < this.together) return;
        this.together = 0;
        for (const go of this.waiting.splice(0)) go();
      });
    }
    return value;
  }
  override set(key: string, value: string, ttlMs: number): Promise<void> {
    if (this.failWrites) return Promise.reject(new StoreUnavailableError('a held store', 'ECONNRESET'));
    return super.set(key, value, ttlMs);
  }
}

describe('the consent decision and the authorization request, on a store that can be held', () => {
  let svc: HttpService;
  const store = new HeldStore();
  beforeAll(async () => {
    svc = await signInService(sb, { store });
  });

  async function consent() {
    const reg = await register(svc, [REDIRECT]);
    const res = await fetch(authorizeUrl(svc, reg.body.client_id, { state: 'st-1' }), { redirect: 'manual' });
    const transaction = /name="transaction" value="([^"]+)"/.exec(await res.text())![1]!;
    const cookie = res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0]!)
      .join('; ');
    return { transaction, cookie };
  }
  const decide = (body: string, headers: Record<string, string>) =>
    fetch(`${svc.url}/authorize/decision`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: svc.url, ...headers },
      body,
    });

  it('two decisions that both read the transaction before either used it: one goes on, the other is told it was used', async () => {
    const c = await consent();
    store.together = 2;
    const body = new URLSearchParams({ transaction: c.transaction, decision: 'continue' }).toString();
    const both = await Promise.all([decide(body, { Cookie: c.cookie }), decide(body, { Cookie: c.cookie })]);
    expect(both.map((r) => r.status).sort()).toEqual([302, 400]);
    const refused = both.find((r) => r.status === 400)!;
    expect(await refused.text()).toContain('This sign-in has expired or was already used.');
  });

  it('a body it cannot read is refused with its own reason and status; still unused, the decision goes on', async () => {
    const c = await consent();
    const text = await decide(new URLSearchParams({ transaction: c.transaction, decision: 'continue' }).toString(), {
      Cookie: c.cookie,
      'Content-Type': 'text/plain',
    });
    expect(text.status).toBe(415);
    expect(await text.text()).toContain('Send application/x-www-form-urlencoded or application/json.');
    const big = await decide(`transaction=${c.transaction}&pad=${'x'.repeat(70_000)}`, { Cookie: c.cookie });
    expect(big.status).toBe(413);
    expect(await big.text()).toMatch(/The request body is larger than \d+ KiB\./);
    expect((await decide(new URLSearchParams({ transaction: c.transaction, decision: 'continue' }).toString(), { Cookie: c.cookie })).status).toBe(302);
  });

  it('the store failing while the sign-in starts: the service says it cannot answer now; nothing goes back to the app', async () => {
    const reg = await register(svc, [REDIRECT]);
    store.failWrites = true;
    try {
      const res = await fetch(authorizeUrl(svc, reg.body.client_id, { state: 'st-2' }), { redirect: 'manual' });
      expect(res.status).toBe(503);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.json()).toEqual({ error: 'temporarily_unavailable', error_description: 'Sign-in cannot answer right now; try again in a moment.' });
    } finally {
      store.failWrites = false;
    }
  });
});

describe('refreshes', () => {
  type TokenBody = { error?: string; error_description?: string; access_token?: string; refresh_token?: string };
  const token = async (svc: HttpService, fields: Record<string, string>) => {
    const res = await fetch(`${svc.url}/token`, form(fields));
    return { status: res.status, body: (await res.json()) as TokenBody };
  };
  async function signedIn(svc: HttpService, email: string, password: string) {
    const c = await codeFor(svc, email, password);
    const first = await token(svc, {
      grant_type: 'authorization_code',
      code: c.code,
      code_verifier: c.verifier,
      client_id: c.clientId,
      redirect_uri: REDIRECT,
    });
    expect(first.status).toBe(200);
    return { clientId: c.clientId, refreshToken: first.body.refresh_token! };
  }
  const refresh = (svc: HttpService, clientId: string, refreshToken: string) =>
    token(svc, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
  const audits = (lines: string[], kind: string) => lines.filter((l) => l.includes(`"audit":"${kind}"`)).map((l) => JSON.parse(l) as Record<string, unknown>);

  it('after the session time limit a refresh is refused, even where the store (on its own clock) still holds the refresh token', async () => {
    // The store's clock is real time; the service's Date is moved past the session's end below.
    const store = new MemoryAuthStore(undefined, () => performance.timeOrigin + performance.now());
    const svc = await signInService(sb, { store, auth: { sessionSeconds: 3_600 } });
    const s = await signedIn(svc, 'reader@demo.example', 'reader-demo');
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3_600_000 + 60_000 });
    try {
      expect(await refresh(svc, s.clientId, s.refreshToken)).toEqual({
        status: 400,
        body: { error: 'invalid_grant', error_description: "This sign-in session has reached its time limit: sign in again at the firm's identity provider." },
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it('an identity provider that rotates its refresh token at each use: the new one is kept, so the next refresh works', async () => {
    const svc = await signInService(sb, { auth: { sessionSeconds: 30 * 86_400 } });
    const s = await signedIn(svc, 'reader@demo.example', 'reader-demo');
    // Eleven days on, past 70% of its refresh tokens' 14 days, the demo identity provider (oidc-provider)
    // rotates its refresh token at each use and refuses the one it replaced, as Okta's rotation does.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 11 * 86_400_000 });
    try {
      const first = await refresh(svc, s.clientId, s.refreshToken);
      expect(first.status).toBe(200);
      expect(await refresh(svc, s.clientId, first.body.refresh_token!)).toMatchObject({ status: 200 });
    } finally {
      vi.useRealTimers();
    }
  });

  describe('roles decided again, on a file store `sessions list` reads', () => {
    const dir = mkdtempSync(join(suiteFolder(), 'proof-sessions-'));
    const lines: string[] = [];
    const policy: Policy = { readers: ['@demo.example'], senders: ['sender@demo.example'] };
    let svc: HttpService;
    beforeAll(async () => {
      svc = await signInService(sb, { store: authStoreOf(new FileStore(dir)), policy, lines });
    });
    afterAll(() => {
      policy.senders = ['sender@demo.example'];
    });
    const listed = async () => {
      const out: string[] = [];
      expect(
        await sessionsCli(
          ['list'],
          { DOCREQ_STORE: 'file', DOCREQ_STATE_DIR: dir },
          (l) => out.push(l),
          () => undefined,
        ),
      ).toBe(0);
      return out.slice(1).map((l) => l.split('  ').slice(0, 2));
    };

    it('a refresh with the same role audits nothing; a changed role is audited and listed; refused by the settings, the session ends saying so', async () => {
      const s = await signedIn(svc, 'sender@demo.example', 'sender-demo');
      const same = await refresh(svc, s.clientId, s.refreshToken);
      expect(same.status).toBe(200);
      expect(audits(lines, 'role changed')).toEqual([]);
      expect(await listed()).toEqual([['sender@demo.example', 'sender']]);

      policy.senders = [];
      const changed = await refresh(svc, s.clientId, same.body.refresh_token!);
      expect(changed.status).toBe(200);
      expect(audits(lines, 'role changed')).toEqual([expect.objectContaining({ email: 'sender@demo.example', from: 'sender', to: 'reader' })]);
      expect(await listed()).toEqual([['sender@demo.example', 'reader']]);

      policy.readers = [];
      try {
        expect((await refresh(svc, s.clientId, changed.body.refresh_token!)).body.error).toBe('invalid_grant');
      } finally {
        policy.readers = ['@demo.example'];
      }
      expect(audits(lines, 'session ended')).toEqual([expect.objectContaining({ why: 'no longer allowed by the settings', email: 'sender@demo.example' })]);
    });

    it('a refresh token used again ends the session, and the audit line says why', async () => {
      const s = await signedIn(svc, 'reader@demo.example', 'reader-demo');
      expect((await refresh(svc, s.clientId, s.refreshToken)).status).toBe(200);
      expect((await refresh(svc, s.clientId, s.refreshToken)).status).toBe(400);
      expect(audits(lines, 'session ended').filter((a) => a.email === 'reader@demo.example')).toEqual([
        expect.objectContaining({ why: 'refresh token reused' }),
      ]);
    });
  });
});
