import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_USERS } from '../src/sandbox/idp.js';
import { childEnv, suiteFolder } from './support/folders.js';
import { captured } from './support/key-scan.js';
import { callerFor, previewThenSend } from './support/connect.js';
import { HostProvider, REDIRECT } from './support/sign-in.js';

/**
 * What ships, end to end: the built CLI (dist/cli.js) as its own process, in team mode with sign-in on
 * the sandbox (`--transport http --auth oauth --sandbox`, the README's try-out), signed in through the
 * demo identity provider in Chromium; and the MCP Bundle (.mcpb) built, unpacked and started as a host
 * starts it. Not the TypeScript source: a build that breaks a dependency (as happened once: minified class names
 * oidc-provider relies on) fails here.
 */

const root = new URL('..', import.meta.url).pathname;
const BIN = join(root, 'dist/cli.js');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const user = (email: string) => DEMO_USERS.find((u) => u.email === email)!;
const [READER, SENDER, OUTSIDER] = [user('reader@demo.example'), user('sender@demo.example'), user('outsider@elsewhere.example')];
const REQUEST = { title: 'Shipped build check', items: [{ name: 'Bank statement' }] };

const call = (client: Client, name: string, args: Record<string, unknown> = {}) => callerFor(client)(name, args);

/** The built CLI as its own process with a state folder of its own; resolves once it says where it serves. */
async function startCli(args: string[]): Promise<{ url: string; stderr: () => string; stop(): Promise<void> }> {
  const state = mkdtempSync(join(suiteFolder(), 'shipped-'));
  const child: ChildProcess = spawn(process.execPath, [BIN, ...args], { env: { ...childEnv(), DOCREQ_STATE_DIR: state }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the built CLI did not start:\n${stderr}`)), 15_000);
    const look = () => {
      const found = /serving MCP over HTTP at (http:\/\/\S+)\/mcp/.exec(stderr)?.[1];
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    };
    child.stderr!.on('data', look);
    void exited.then(() => reject(new Error(`the built CLI exited:\n${stderr}`)));
  });
  return {
    url,
    stderr: () => stderr,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      captured.push(stderr);
    },
  };
}

describe.skipIf(!existsSync(CHROMIUM))('the built CLI: sandbox sign-in in Chromium, then MCP with the token', () => {
  let cli: Awaited<ReturnType<typeof startCli>>;
  const profiles: string[] = [];

  beforeAll(async () => {
    if (!existsSync(BIN)) throw new Error('dist/cli.js is missing: run npm run build (npm test does)');
    cli = await startCli(['--transport', 'http', '--auth', 'oauth', '--sandbox', '--host', '127.0.0.1', '--port', '0']);
  }, 30_000);
  afterAll(async () => {
    await cli?.stop();
    for (const dir of profiles) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * One person signs in the way a host sends them: the SDK client is refused (401) and registers, the
   * person's browser (a fresh Chromium profile) opens the authorization URL, continues on our page and
   * signs in at the demo identity provider. Returns the host's provider and where the browser ended up.
   */
  async function signInInChromium(who: { email: string; password: string }) {
    const provider = new HostProvider();
    const first = new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`), { authProvider: provider });
    await expect(new Client({ name: 'host', version: '1' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    const profile = mkdtempSync(join(suiteFolder(), 'chromium-'));
    profiles.push(profile);
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      page.setDefaultTimeout(10_000);
      let callback: URL | undefined;
      await page.route(`${new URL(REDIRECT).origin}/**`, (route) => {
        callback = new URL(route.request().url());
        return route.fulfill({
          status: 200,
          contentType: 'text/html',
          body: '<!doctype html><html lang="en"><title>Host</title><main><h1>Back at the host</h1></main></html>',
        });
      });
      await page.goto(provider.authorizationUrl!.href);
      // Our consent page, as the person reads it before Continue.
      const consent = (await page.textContent('main')) ?? '';
      await page.getByRole('button', { name: /^continue/i }).click();
      await page.getByLabel(/e-mail/i).fill(who.email);
      await page.getByLabel(/password/i).fill(who.password);
      await page.getByRole('button', { name: /^sign in$/i }).click();
      const ended = await Promise.race([
        page
          .getByRole('heading', { name: 'Back at the host' })
          .waitFor()
          .then(() => 'host' as const),
        page
          .getByRole('heading', { name: /not allowed/i })
          .waitFor()
          .then(() => 'refused' as const),
        page
          .getByRole('heading', { name: /could not/i })
          .waitFor()
          .then(() => 'failed' as const),
      ]);
      const text = (await page.textContent('main')) ?? '';
      captured.push(consent, text);
      // Refused: the page's way back tells the app (error=access_denied on its redirect URI).
      if (ended === 'refused') await page.getByRole('link', { name: /^back to /i }).click();
      return { provider, first, ended, callback, text, consent };
    } finally {
      await context.close();
    }
  }

  /** The SDK's Streamable HTTP client with the person's tokens, after the code came back to the host. */
  async function connectWithCode(signedIn: Awaited<ReturnType<typeof signInInChromium>>) {
    expect(signedIn.ended, signedIn.text).toBe('host');
    expect(signedIn.callback?.searchParams.get('iss')).toBe(cli.url);
    await signedIn.first.finishAuth(signedIn.callback!.searchParams.get('code')!);
    expect(signedIn.provider.tokens()?.access_token).toBeTruthy();
    const client = new Client({ name: 'host', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${cli.url}/mcp`), { authProvider: signedIn.provider }));
    return client;
  }

  const audits = () =>
    cli
      .stderr()
      .split('\n')
      .filter((l) => l.includes('"audit":"send"'))
      .map((l) => JSON.parse(l) as { outcome: string; email: string });

  it('the sender signs in, previews, and sends once in their own name', async () => {
    const client = await connectWithCode(await signInInChromium(SENDER));
    const clients = await call(client, 'list_clients', { limit: 1 });
    const clientId = (clients.structuredContent as { clients: { id: string }[] }).clients[0]!.id;
    const { preview, sent } = await previewThenSend({ call: callerFor(client) }, 'create_request', { client: clientId, ...REQUEST });
    expect(preview.isError).toBeFalsy();
    expect(sent.isError, sent.text).toBeFalsy();
    expect(sent.text).toContain(`in the name of ${SENDER.email}`);
    const listed = await call(client, 'list_requests', { search: REQUEST.title });
    expect(listed.structuredContent).toMatchObject({ matched: 1 });
    expect(audits()).toEqual([expect.objectContaining({ outcome: 'sent', email: SENDER.email })]);
    await client.close();
  }, 60_000);

  it('the reader signs in and reads, but is not offered the tools that send and cannot call them', async () => {
    const client = await connectWithCode(await signInInChromium(READER));
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('list_requests');
    expect(names).not.toContain('create_request');
    expect(names).not.toContain('create_request_batch');
    const before = audits().length;
    const refused = await call(client, 'create_request', { client: 'anyone', ...REQUEST, title: 'Reader send' });
    expect(refused.isError).toBe(true);
    expect((await call(client, 'list_requests', { search: 'Reader send' })).structuredContent).toMatchObject({ matched: 0 });
    expect(audits().length).toBe(before);
    await client.close();
  }, 60_000);

  it('someone the firm has not allowed is refused at sign-in, with a page that says why, and the host gets no code', async () => {
    const signedIn = await signInInChromium(OUTSIDER);
    expect(signedIn.ended).toBe('refused');
    expect(signedIn.text).toContain(OUTSIDER.email);
    expect(signedIn.text).not.toMatch(/DOCREQ_/);
    // The app is told, and gets no code.
    expect(signedIn.callback?.searchParams.get('error')).toBe('access_denied');
    expect(signedIn.callback?.searchParams.get('code')).toBeNull();
    expect(signedIn.provider.tokens()).toBeUndefined();
  }, 60_000);

  it('the consent page names the app (its registered client_name) and where it returns', async () => {
    const signedIn = await signInInChromium(READER);
    expect(signedIn.consent).toContain('Test host');
    expect(signedIn.consent).toContain(new URL(REDIRECT).host);
    expect(signedIn.consent).not.toMatch(/DOCREQ_/);
  }, 60_000);

  it('/ reads as a page: what this is and how to connect, nothing secret', async () => {
    const profile = mkdtempSync(join(suiteFolder(), 'chromium-'));
    profiles.push(profile);
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      const answer = await page.goto(`${cli.url}/`);
      expect(answer?.status()).toBe(200);
      expect(answer?.headers()['content-type']).toMatch(/^text\/html/);
      await page.getByRole('heading', { level: 1 }).waitFor();
      const text = (await page.textContent('body')) ?? '';
      captured.push(text);
      expect(text).toContain(`${cli.url}/mcp`);
      expect(text).not.toMatch(/jsonrpc|DOCREQ_/);
    } finally {
      await context.close();
    }
  }, 60_000);
});

describe('the MCP Bundle, built, packed, unpacked and started as a host starts it', () => {
  const work = mkdtempSync(join(suiteFolder(), 'mcpb-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('previews and sends once over stdio against the sandbox', async () => {
    const { hostCommand, mcpb, packBundle } = (await import(new URL('../scripts/bundle-server.mjs', import.meta.url).href)) as {
      packBundle: (dir: string, out: string) => Promise<string>;
      mcpb: (...args: string[]) => string;
      hostCommand: (installed: string, answers: Record<string, string>) => { command: string; args: string[]; env: Record<string, string> };
    };
    const out = join(work, 'docreq-mcp.mcpb');
    await packBundle(join(work, 'bundle'), out);
    const installed = join(work, 'installed');
    mcpb('unpack', out, installed);
    // What the person answers in the host; the sandbox stands in for the service.
    // The bundle's "Try the sandbox" choice: no key, no URL.
    const host = hostCommand(installed, { sandbox: 'true' });
    const state = mkdtempSync(join(suiteFolder(), 'mcpb-state-'));
    const transport = new StdioClientTransport({
      command: host.command,
      args: host.args,
      env: { ...childEnv(), DOCREQ_STATE_DIR: state, ...host.env },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: 'bundle-e2e', version: '1' });
    await client.connect(transport);
    try {
      const clients = await call(client, 'list_clients', { limit: 1 });
      const clientId = (clients.structuredContent as { clients: { id: string }[] }).clients[0]!.id;
      const { preview, sent } = await previewThenSend({ call: callerFor(client) }, 'create_request', { client: clientId, ...REQUEST });
      expect(preview.isError).toBeFalsy();
      expect(sent.isError, sent.text).toBeFalsy();
      expect((sent.structuredContent as { request: { id: string } }).request.id).toBeTruthy();
      expect((await call(client, 'list_requests', { search: REQUEST.title })).structuredContent).toMatchObject({ matched: 1 });
    } finally {
      await client.close();
      captured.push(stderr);
    }
  }, 120_000);
});
