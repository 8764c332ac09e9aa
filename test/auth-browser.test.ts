import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpService } from '../src/transport/http.js';
import { sandbox } from './support/sandbox.js';
import { authorizeUrl, REDIRECT, register, signInService } from './support/sign-in.js';

/**
 * The same sign-in in a real browser (Debian's Chromium, driven by playwright-core), with the pages'
 * CSP enforced: every page is screenshotted into test/.generated/screenshots/ and checked with axe-core.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = join(new URL('..', import.meta.url).pathname, 'test', '.generated', 'screenshots');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const sb = await sandbox();
let svc: HttpService;
let browser: Browser;

beforeAll(async () => {
  svc = await signInService(sb, { auth: { log: () => undefined } });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  mkdirSync(SHOTS, { recursive: true });
}, 30_000);

afterAll(async () => {
  await browser?.close();
});

async function startUrl(): Promise<string> {
  const reg = await register(svc, [REDIRECT], { client_name: 'Browser host' });
  return authorizeUrl(svc, reg.body.client_id, { state: 'browser', resource: `${svc.url}/mcp` }).href;
}

/** Screenshot and accessibility check of the page shown now; returns axe's violations (ids). */
async function capture(page: Page, name: string): Promise<string[]> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string }[] }> } }).axe;
    return (await axe.run()).violations.map((v) => `${v.id} (${v.impact})`);
  });
  return result;
}

describe.skipIf(!existsSync(CHROMIUM))('firm sign-in in a real browser', () => {
  it('consent, the identity provider, and back to the host with a code; each page accessible', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(5_000);
    let callback: URL | undefined;
    await page.route('http://127.0.0.1:9/**', (route) => {
      callback = new URL(route.request().url());
      return route.fulfill({
        status: 200,
        contentType: 'text/html',
        body: '<!doctype html><html lang="en"><title>Host</title><main><h1>Signed in</h1></main></html>',
      });
    });
    const violations: Record<string, string[]> = {};
    const blocked: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
    });

    await page.goto(await startUrl());
    await expect.poll(() => page.title()).toContain('Sign in to Document Requests');
    // The page names the app (its registered client_name, as its own claim) and where it returns.
    const consentText = await page.textContent('main');
    expect(consentText).toContain('An app that calls itself Browser host asks to use');
    expect(consentText).toContain('returns you to 127.0.0.1:9');
    violations.consent = await capture(page, '1-consent');
    await page.getByRole('button', { name: 'Continue to firm sign-in' }).click();

    await page.getByLabel('E-mail address').waitFor();
    violations.idpLogin = await capture(page, '2-idp-login');
    await page.getByLabel('E-mail address').fill('sender@demo.example');
    await page.getByLabel('Password').fill('sender-demo');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Signed in' }).waitFor();
    await page.screenshot({ path: join(SHOTS, '3-back-at-host.png') });

    expect(callback?.searchParams.get('code')).toBeTruthy();
    expect(callback?.searchParams.get('state')).toBe('browser');
    expect(callback?.searchParams.get('iss')).toBe(svc.url);
    expect(blocked).toEqual([]);
    expect(violations).toEqual({ consent: [], idpLogin: [] });
    await context.close();
  });

  it('a person the firm has not allowed, and a link from an unknown app, each get a plain page that says why; the app is told access_denied', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(5_000);
    let callback: URL | undefined;
    await page.route('http://127.0.0.1:9/**', (route) => {
      callback = new URL(route.request().url());
      return route.fulfill({
        status: 200,
        contentType: 'text/html',
        body: '<!doctype html><html lang="en"><title>Host</title><main><h1>Back at the app</h1></main></html>',
      });
    });
    await page.goto(await startUrl());
    await page.getByRole('button', { name: 'Continue to firm sign-in' }).click();
    await page.getByLabel('E-mail address').fill('outsider@elsewhere.example');
    await page.getByLabel('Password').fill('outsider-demo');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    expect(await page.textContent('main')).toContain('has not allowed your account');
    expect(await page.textContent('main')).not.toContain('DOCREQ_');
    const refused = await capture(page, '4-refused');
    await page.getByRole('link', { name: 'Back to Browser host' }).click();
    await page.getByRole('heading', { name: 'Back at the app' }).waitFor();
    expect(callback?.searchParams.get('error')).toBe('access_denied');
    expect(callback?.searchParams.get('state')).toBe('browser');
    expect(callback?.searchParams.get('iss')).toBe(svc.url);
    expect(callback?.searchParams.get('code')).toBeNull();

    await page.goto(`${svc.url}/authorize?response_type=code&client_id=dcr_unknown&redirect_uri=${encodeURIComponent(REDIRECT)}`);
    await page.getByRole('heading', { name: 'Sign-in could not start' }).waitFor();
    const error = await capture(page, '5-unknown-app');
    expect({ refused, error }).toEqual({ refused: [], error: [] });
    await context.close();
  });
});
