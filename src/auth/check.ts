import { readSettings } from '../config.js';
import type { FlagValues } from '../settings.js';
import { redactor } from '../text/redact.js';
import { oneLine } from '../text/render.js';
import { loadAuthSetup, type AuthSetup } from './settings.js';

/**
 * `docreq-mcp check` in team mode: how people are let in. With sign-in (--auth oauth), the settings,
 * the identity provider's discovery document (reachable, and naming the configured issuer) and the
 * client secret file (readable; never shown, whole or in part). True when something is wrong.
 */
export async function checkSignIn(flags: FlagValues, env: NodeJS.ProcessEnv, print: (line: string) => void): Promise<boolean> {
  const setup = await loadAuthSetup(flags, env);
  const reading = readSettings(flags, env);
  const out = (line: string) => print(redactor(setup.secrets ?? [])(line));
  if (setup.problems.length && setup.mode === 'bearer') {
    for (const problem of setup.problems) out(`✗ sign-in: ${problem}`);
    return true;
  }
  if (setup.mode === 'bearer') {
    out(
      "✓ sign-in: none (DOCREQ_AUTH=bearer): each request brings the firm's key (Authorization: Bearer <key>); the service holds none (set DOCREQ_API_KEY for this check only, to try a key)",
    );
    if (reading.text('apiKeyFile')?.trim()) {
      out(
        '✗ DOCREQ_API_KEY_FILE is set: team mode with bearer refuses a key of its own (anyone reaching the port would act as the firm); unset it, or use --auth oauth',
      );
      return true;
    }
    return false;
  }
  out("✓ sign-in: oauth: staff sign in with the firm's identity provider; the firm's key stays in the service");
  let wrong = setup.problems.length > 0;
  for (const problem of setup.problems) out(`✗ sign-in: ${problem}`);
  if (reading.text('apiKey')?.trim()) {
    out('✗ DOCREQ_API_KEY is set: with --auth oauth the service takes the key from DOCREQ_API_KEY_FILE only (team mode refuses to start); unset it');
    wrong = true;
  }
  const probe = setup.probe;
  if (!probe) return wrong;
  if (probe.clientSecretRead) out('✓ client secret: DOCREQ_OIDC_CLIENT_SECRET_FILE is readable (not shown)');
  const { readers, senders } = probe.policy;
  if (readers.length || senders.length)
    out(`✓ who may read: ${readers.join(', ') || 'only those who may send'}; who may send: ${senders.join(', ') || 'nobody'}`);
  if (!probe.publicUrl)
    out(
      '! DOCREQ_PUBLIC_URL is not set: hosts will be told the address the service listens on (http://…), which is wrong behind a proxy; set it to the https address they reach',
    );
  else if (!probe.publicUrl.startsWith('https:'))
    out(`! public address ${probe.publicUrl} is not https: only this machine can sign in; set DOCREQ_PUBLIC_URL to the https address hosts reach`);
  if (probe.publicUrl) out(`✓ public address ${probe.publicUrl}: register ${probe.publicUrl}/login/callback as the redirect URI at the identity provider`);
  if (probe.secretFrom === 'random')
    out(
      "! no DOCREQ_AUTH_SECRET_FILE (nor DOCREQ_TOKEN_SECRET): tokens are signed with a secret made at each start, so every restart signs everyone out and replicas refuse each other's tokens; set DOCREQ_AUTH_SECRET_FILE (openssl rand -hex 32)",
    );
  else
    out(
      `✓ tokens signed with the secret from ${probe.secretFrom === 'file' ? 'DOCREQ_AUTH_SECRET_FILE' : 'DOCREQ_TOKEN_SECRET'} (not shown): restarts and replicas keep people signed in; changing it signs everyone out`,
    );
  out(
    `✓ sessions last ${probe.sessionHours} hours (DOCREQ_AUTH_SESSION_HOURS), then people sign in at the identity provider again; who may read or send is decided again at every refresh`,
  );
  if (probe.issuer && (await checkDiscovery(probe, out))) wrong = true;
  return wrong;
}

/** The identity provider's discovery document: reachable, naming the configured issuer, offering the code flow. True when not. */
async function checkDiscovery(probe: NonNullable<AuthSetup['probe']>, out: (line: string) => void): Promise<boolean> {
  let wrong = false;
  try {
    const meta = await probe.discover();
    const missing = (['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const).filter((k) => typeof meta[k] !== 'string');
    const codeFlow = !Array.isArray(meta.response_types_supported) || meta.response_types_supported.includes('code');
    if (missing.length || !codeFlow) {
      out(
        `✗ identity provider ${probe.issuer}: its discovery document ${missing.length ? `has no ${missing.join(', ')}` : 'does not offer the authorization code flow'}`,
      );
      wrong = true;
    } else {
      out(`✓ identity provider ${probe.issuer}: discovery document reachable, its issuer matches DOCREQ_OIDC_ISSUER`);
    }
  } catch (error) {
    const e = error as Error & { code?: string; cause?: unknown };
    // The network's own reason (ECONNREFUSED, ENOTFOUND, a certificate) sits at the end of the cause chain.
    let code: string | undefined;
    for (let c: unknown = e, depth = 0; c instanceof Error && depth < 5; c = (c as Error & { cause?: unknown }).cause, depth++)
      code = (c as Error & { code?: string }).code ?? code;
    const mismatch = /issuer/i.test(e.message) || e.code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED';
    const why = mismatch
      ? 'its discovery document names another issuer: set DOCREQ_OIDC_ISSUER to the exact issuer the provider publishes'
      : `its discovery document (/.well-known/openid-configuration) cannot be read (${oneLine([code, e.message].filter(Boolean).join(': '), 200)})`;
    out(`✗ identity provider ${probe.issuer}: ${why}`);
    wrong = true;
  }
  return wrong;
}
