import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../src/sandbox/service.js';
import type { HttpService } from '../src/transport/http.js';
import { sandbox } from './support/sandbox.js';
import { codeFor, signInService } from './support/sign-in.js';
import { freePort } from './support/ports.js';

// Team mode with sign-in and metrics on: each sign-in's outcome reaches docreq_sign_ins_total, and
// no label or value names the person.
describe('metrics: sign-ins', () => {
  let sb: Sandbox;
  let svc: HttpService;
  beforeAll(async () => {
    sb = await sandbox();
    svc = await signInService(sb, { metricsPort: await freePort() });
  });
  afterAll(() => sb.close());

  const scrape = async () => (await fetch(svc.metricsUrl!)).text();
  const count = (text: string, outcome: string) => Number(new RegExp(`^docreq_sign_ins_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);

  it('counts a sign-in that starts a session and one that is refused', async () => {
    const before = await scrape();
    const sender = await codeFor(svc, 'sender@demo.example', 'sender-demo');
    expect(sender.code).toBeTruthy();
    expect(sender.location.pathname).toBe('/callback');
    // The outsider's sign-in ends on our refusal page (the last redirect followed is the IdP's back to us).
    const outsider = await codeFor(svc, 'outsider@elsewhere.example', 'outsider-demo');
    expect(outsider.location.pathname).toBe('/login/callback');
    const after = await scrape();
    expect(count(after, 'signed_in')).toBe(count(before, 'signed_in') + 1);
    expect(count(after, 'refused')).toBe(count(before, 'refused') + 1);
    expect(after).not.toMatch(/demo\.example|elsewhere\.example|Sam Sender|Olive/);
  });
});
