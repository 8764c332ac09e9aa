import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { MemoryAuthStore } from '../src/auth/index.js';
import type { HttpService } from '../src/transport/http.js';
import { sandbox } from './support/sandbox.js';
import { codeFor, connectAs, form, mcpList, REDIRECT, s256, signIn, signInService } from './support/sign-in.js';

/**
 * Firm sign-in end to end: the real service on loopback, oidc-provider as the firm's identity
 * provider, and the official SDK client's OAuth flow (discovery from a 401, registration, PKCE),
 * its browser step played by following the redirects and submitting the identity provider's form.
 */

const sb = await sandbox();
const logLines: string[] = [];
const secret = new Uint8Array(randomBytes(32));
const store = new MemoryAuthStore();

/** A service; replicas behind the same public address share the store and the secret. */
const service = (publicUrl?: string): Promise<HttpService> =>
  signInService(sb, { ...(publicUrl ? { publicUrl } : {}), store, secret, lines: logLines, auth: { unsafeAllowLoopbackClientDocuments: true } });

describe('firm sign-in (--auth oauth)', () => {
  let svc: HttpService;
  beforeAll(async () => {
    svc = await service();
  });

  it('answers 401 with the protected resource metadata, which names this server as its authorization server', async () => {
    const res = await mcpList('', svc).catch(() => undefined);
    const bare = await fetch(`${svc.url}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${svc.url}/.well-known/oauth-protected-resource/mcp", scope="docreq"`);
    expect(res?.status).toBe(401);
    const prm = (await (await fetch(`${svc.url}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, unknown>;
    expect(prm).toMatchObject({ resource: `${svc.url}/mcp`, authorization_servers: [svc.url] });
    const as = (await (await fetch(`${svc.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(as).toMatchObject({
      issuer: svc.url,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      grant_types_supported: ['authorization_code', 'refresh_token'],
    });
  });

  it('a sender signs in through the SDK client and the firm IdP, sends, and the send is audited under their name', async () => {
    const sender = await connectAs(svc, 'sender@demo.example', 'sender-demo');
    const names = (await sender.client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('create_request');
    const clients = await sender.call('list_clients', { limit: 1 });
    const clientId = (clients.structuredContent as { clients: { id: string }[] }).clients[0]!.id;
    const sent = await sender.call('create_request', { client: clientId, title: 'Signed-in send', items: [{ name: 'Bank statement' }] });
    expect(sent.isError).toBeFalsy();
    expect(sent.text).toContain('Sent in the name of sender@demo.example (signed in).');
    const requestId = (sent.structuredContent as { request: { id: string } }).request.id;
    const audit = logLines.filter((l) => l.includes('"audit":"send"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ outcome: 'sent', email: 'sender@demo.example', sub: 'sender@demo.example', clientId, requestId });
    expect(JSON.stringify(audit[0])).not.toContain(sb.keys.demo);

    // A batch: one audit line per recipient, each with the person.
    const two = (await sender.call('list_clients', { limit: 3 })).structuredContent as { clients: { id: string }[] };
    const ids = two.clients.slice(1, 3).map((c) => c.id);
    const batch = await sender.call('create_request_batch', { clients: ids, title: 'Signed-in batch', items: [{ name: 'Payslips' }] });
    expect(batch.isError).toBeFalsy();
    expect(batch.text).toContain('sender@demo.example');
    const lines = logLines.filter((l) => l.includes('"audit":"send"')).map((l) => JSON.parse(l) as { clientId: string; email: string; outcome: string });
    expect(lines.slice(1).map((l) => [l.clientId, l.email, l.outcome])).toEqual(ids.map((id) => [id, 'sender@demo.example', 'sent']));
    await sender.client.close();
  });

  it("a reader's session does not list the sending tools and cannot call them", async () => {
    const reader = await connectAs(svc, 'reader@demo.example', 'reader-demo');
    const names = (await reader.client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('list_clients');
    expect(names).not.toContain('create_request');
    expect(names).not.toContain('create_request_batch');
    const before = sb.calls.filter((c) => c.method === 'POST').length;
    const refused = await reader.call('create_request', { client: 'x', title: 'No', items: [{ name: 'Y' }] });
    expect(refused.isError).toBe(true);
    // Told their role, in words for a person: no setting named.
    expect(refused.text).toContain('you are signed in with the reader role, which may list and read but not send');
    expect(refused.text).not.toContain('DOCREQ_');
    expect(sb.calls.filter((c) => c.method === 'POST').length).toBe(before);
    await reader.client.close();
  });

  it('someone the firm has not allowed sees why on a plain page, and the app gets no code', async () => {
    const reg = (await (
      await fetch(`${svc.url}/register`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [REDIRECT] }),
      })
    ).json()) as { client_id: string };
    const url = new URL(`${svc.url}/authorize`);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: reg.client_id,
      redirect_uri: REDIRECT,
      code_challenge: s256('x'.repeat(43)),
      code_challenge_method: 'S256',
      state: '<script>alert(1)</script>',
    }))
      url.searchParams.set(k, v);
    const { location, pages } = await signIn(url, 'outsider@elsewhere.example', 'outsider-demo');
    expect(location.origin).not.toBe(new URL(REDIRECT).origin);
    const last = pages.at(-1)!;
    expect(last.status).toBe(403);
    expect(last.body).toContain('outsider@elsewhere.example');
    expect(last.body).toContain('has not allowed your account');
    expect(last.body).not.toMatch(/DOCREQ_/); // staff pages name no settings
    // The way back: the app is told, on its own redirect URI, with its state (as sent, escaped on the page) and our issuer.
    const href = /<a class="button" href="([^"]+)">Back to 127\.0\.0\.1:9<\/a>/.exec(last.body)![1]!.replace(/&#38;/g, '&').replace(/&#39;/g, "'");
    const back = new URL(href);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(Object.fromEntries(back.searchParams)).toMatchObject({ error: 'access_denied', state: '<script>alert(1)</script>', iss: svc.url });
    for (const page of pages.filter((p) => p.url.startsWith(svc.url))) {
      expect(page.body).not.toContain('<script');
      expect(page.body).not.toContain('alert(1)');
    }
  });

  it('refresh tokens rotate; a reused one ends the session on the spot', async () => {
    const { clientId, verifier, code } = await codeFor(svc, 'reader@demo.example', 'reader-demo');
    const first = (await (
      await fetch(
        `${svc.url}/token`,
        form({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT, resource: `${svc.url}/mcp` }),
      )
    ).json()) as OAuthTokens;
    const second = (await (
      await fetch(`${svc.url}/token`, form({ grant_type: 'refresh_token', refresh_token: first.refresh_token!, client_id: clientId }))
    ).json()) as OAuthTokens;
    expect(second.refresh_token).toBeTruthy();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await mcpList(second.access_token, svc)).status).toBe(200);
    const reused = await fetch(`${svc.url}/token`, form({ grant_type: 'refresh_token', refresh_token: first.refresh_token!, client_id: clientId }));
    expect(reused.status).toBe(400);
    expect(((await reused.json()) as { error: string }).error).toBe('invalid_grant');
    // The thief's copy is refused, and so is the rightful holder's newer token: the whole session ended.
    expect((await fetch(`${svc.url}/token`, form({ grant_type: 'refresh_token', refresh_token: second.refresh_token!, client_id: clientId }))).status).toBe(
      400,
    );
    const after = await mcpList(second.access_token, svc);
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('revocation ends a session, on this replica and on another that shares the store and secret', async () => {
    const replica = await service(svc.url); // behind the same public address, as behind a load balancer
    const { clientId, verifier, code } = await codeFor(svc, 'reader@demo.example', 'reader-demo');
    const tokens = (await (
      await fetch(`${svc.url}/token`, form({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT }))
    ).json()) as OAuthTokens;
    expect((await mcpList(tokens.access_token, replica)).status).toBe(200);
    expect((await fetch(`${svc.url}/revoke`, form({ token: tokens.refresh_token!, client_id: clientId }))).status).toBe(200);
    for (const s of [svc, replica]) {
      const res = await mcpList(tokens.access_token, s);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain('signed out');
    }
  });

  it('refuses a token for another audience, and tokens for another resource are never issued', async () => {
    const forged = await new SignJWT({ email: 'sender@demo.example', role: 'sender', fam: 'f', st: Date.now() })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
      .setIssuer(svc.url)
      .setAudience('https://other.example/mcp')
      .setSubject('s')
      .setExpirationTime('5m')
      .sign(secret);
    const res = await mcpList(forged, svc);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('another resource');

    const wrong = await codeFor(svc, 'reader@demo.example', 'reader-demo').catch((e: Error) => e);
    expect(wrong).not.toBeInstanceOf(Error);
    const reg = (await (
      await fetch(`${svc.url}/register`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [REDIRECT] }),
      })
    ).json()) as { client_id: string };
    const url = new URL(`${svc.url}/authorize`);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: reg.client_id,
      redirect_uri: REDIRECT,
      code_challenge: s256('y'.repeat(43)),
      code_challenge_method: 'S256',
      resource: 'https://other.example/mcp',
    }))
      url.searchParams.set(k, v);
    const back = await fetch(url, { redirect: 'manual' });
    expect(back.status).toBe(302);
    const location = new URL(back.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('invalid_target');
    expect(location.searchParams.get('iss')).toBe(svc.url);
    // At the token endpoint too.
    const ok = wrong as Awaited<ReturnType<typeof codeFor>>;
    const atToken = await fetch(
      `${svc.url}/token`,
      form({
        grant_type: 'authorization_code',
        code: ok.code,
        code_verifier: ok.verifier,
        client_id: ok.clientId,
        redirect_uri: REDIRECT,
        resource: 'https://other.example/mcp',
      }),
    );
    expect(((await atToken.json()) as { error: string }).error).toBe('invalid_target');
  });

  it('a replayed code is refused and withdraws the tokens it gave; a PKCE mismatch is refused', async () => {
    const { clientId, verifier, code } = await codeFor(svc, 'reader@demo.example', 'reader-demo');
    const exchange = () =>
      fetch(`${svc.url}/token`, form({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT }));
    const first = await exchange();
    expect(first.status).toBe(200);
    const tokens = (await first.json()) as OAuthTokens;
    const again = await exchange();
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error_description: string }).error_description).toContain('already used');
    expect((await mcpList(tokens.access_token, svc)).status).toBe(401);

    const other = await codeFor(svc, 'reader@demo.example', 'reader-demo');
    const mismatch = await fetch(
      `${svc.url}/token`,
      form({
        grant_type: 'authorization_code',
        code: other.code,
        code_verifier: randomBytes(32).toString('base64url'),
        client_id: other.clientId,
        redirect_uri: REDIRECT,
      }),
    );
    expect(mismatch.status).toBe(400);
    expect(((await mismatch.json()) as { error_description: string }).error_description).toContain('PKCE');
  });

  it('accepts a Client ID Metadata Document as the client_id; refuses one that names another client, redirects or is too big', async () => {
    let doc: Record<string, unknown> = {};
    const docs: Server = createHttpServer((req, res) => {
      const self = `http://127.0.0.1:${(docs.address() as AddressInfo).port}`;
      if (req.url === '/moved.json') return void res.writeHead(302, { Location: '/moved-here.json' }).end();
      if (req.url === '/moved-here.json')
        return void res
          .writeHead(200, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ client_id: `${self}/moved.json`, redirect_uris: [REDIRECT] }));
      if (req.url === '/big.json')
        return void res
          .writeHead(200, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ client_id: `${self}/big.json`, redirect_uris: [REDIRECT], client_name: 'x'.repeat(25_000) }));
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(doc));
    });
    await new Promise<void>((r) => docs.listen(0, '127.0.0.1', r));
    const origin = `http://127.0.0.1:${(docs.address() as AddressInfo).port}`;
    const clientId = `${origin}/client.json`;
    try {
      const at = (id: string) => {
        const url = new URL(`${svc.url}/authorize`);
        for (const [k, v] of Object.entries({
          response_type: 'code',
          client_id: id,
          redirect_uri: REDIRECT,
          code_challenge: s256('z'.repeat(43)),
          code_challenge_method: 'S256',
        }))
          url.searchParams.set(k, v);
        return url;
      };
      const url = at(clientId);
      expect((await fetch(at(`${origin}/moved.json`))).status).toBe(400); // redirects are not followed
      expect((await fetch(at(`${origin}/big.json`))).status).toBe(400); // over 20 KB
      doc = { client_id: 'http://127.0.0.1:1/someone-else.json', client_name: 'Impostor', redirect_uris: [REDIRECT] };
      expect((await fetch(url)).status).toBe(400);
      doc = { client_id: clientId, client_name: 'Metadata host', redirect_uris: [REDIRECT] };
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(await page.text()).toContain('Continue to firm sign-in');
    } finally {
      docs.close();
    }
  });
});
