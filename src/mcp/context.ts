import type { CallToolResult, ClientCapabilities, InputRequiredResult } from '@modelcontextprotocol/server';
import { DocReqApi, type ApiClientOptions } from '../api/client.js';
import { BoundedCache } from '../cache.js';
import { localToday } from '../clock.js';
import { secretsOf, type Config } from '../config.js';
import { createLogger, type Logger } from '../log.js';
import { SendLedger } from '../send/ledger.js';
import { Confirmations } from '../send/token.js';
import { storeFingerprint } from '../store/index.js';
import { templateCatalogue } from '../templates/catalogue.js';
import { redactor, sealer } from '../text/redact.js';
import type { SendingContext, ToolDefinition } from '../tools/define.js';
import { TOOLS } from '../tools/index.js';
import type { KeySource } from './results.js';

export interface ServerOptions {
  logger?: Logger;
  /** Gives the day overdue is judged on, YYYY-MM-DD; defaults to this machine's calendar day. */
  clock?: () => string;
  /** Extra options for the API client (tests use small caps and fast retries). */
  api?: Partial<ApiClientOptions>;
  /**
   * Once-only sending state shared by every server of a process (team mode builds a server per
   * HTTP request); by default each server has its own.
   */
  sending?: { ledger: SendLedger; confirmations: Confirmations };
  /** Stateless HTTP: each request is its own server, so `initialize` was answered by another one. */
  stateless?: boolean;
  /**
   * Team mode's plain 2026 call (transport/plain-call.ts): the revision the server is to speak, added to
   * the versions it supports, as the SDK's entry adds it to a server it serves that revision on; the SDK's
   * per-request transport then binds the server to it as it connects.
   */
  modernRevision?: string | undefined;
  /** Team mode, a 2025 connection with a session: its client's capabilities from its initialize (kept in the shared store). */
  clientCapabilities?: ClientCapabilities;
  /** Where the key came from, for what a rejected key tells the person to check (team mode: 'header'). */
  keyFrom?: KeySource;
  /** Team mode with sign-in: the signed-in person, and where each send's audit line goes. */
  actor?: { email: string; sub: string; role?: 'reader' | 'sender' };
  audit?: (line: string) => void;
  /** Told of every tools/call once answered (its result; undefined when it failed as a protocol error) and how long it took, in ms: team mode's metrics. */
  onCall?: (tool: string, result: CallToolResult | InputRequiredResult | undefined, ms: number) => void;
  /** @internal Tools offered after the catalogue's own (tests use it to prove the output check). */
  extraTools?: ToolDefinition[];
}

/**
 * Team mode builds a server (and a logger, and an access-log line) per HTTP request, and compiling a
 * key's patterns and mark each time cost more than many answers: the one redaction (src/text/redact.ts)
 * of a set of secrets, and the firm's fingerprint, are made once per set. Held in this process's memory
 * only, a few sets at most (one per key in use), the oldest dropped.
 */
const KEPT = new BoundedCache<string, unknown>({ maxEntries: 256 });

function kept<T>(id: string, make: () => T): T {
  return KEPT.getOrMake(id, make) as T;
}

/** redactor(secrets), made once per set of secrets. */
export function keptRedactor(secrets: readonly string[]): ReturnType<typeof redactor> {
  return kept(JSON.stringify(['redact', secrets]), () => redactor([...secrets]));
}

/** What a server derives from its secrets and key, made once per set (one lookup per server, not one per part). */
function perKey(secrets: readonly string[], apiKey: string, baseUrl: string | undefined) {
  return kept(JSON.stringify(['key', secrets, apiKey, baseUrl ?? null]), () => ({
    seal: kept(JSON.stringify(['seal', secrets]), () => sealer([...secrets])),
    redact: keptRedactor(secrets),
    redactKey: keptRedactor([apiKey]),
    firm: apiKey ? kept(JSON.stringify(['firm', apiKey, baseUrl ?? null]), () => storeFingerprint(apiKey, baseUrl)) : '',
  }));
}

/**
 * What one server works with, built once from the configuration and its options: the secrets and
 * the one redaction of them, the logger, the API client, once-only sending, the templates, and the
 * catalogue offered.
 */
export function serverContext(config: Config, options: ServerOptions) {
  const secrets = secretsOf(config);
  const apiKey = config.api?.apiKey ?? '';
  const keyed = perKey(secrets, apiKey, config.api?.baseUrl);
  const logger = options.logger ?? createLogger(config.logLevel, secrets);
  const api = config.api
    ? new DocReqApi({
        ...config.api,
        timeoutMs: config.timeoutMs,
        maxResponseBytes: config.maxResponseMb * 1024 * 1024,
        logger,
        redactKey: keyed.redactKey,
        ...(config.serviceProfile ? { profile: config.serviceProfile } : {}),
        ...options.api,
      })
    : undefined;
  const confirmations = options.sending?.confirmations ?? new Confirmations(config.tokenSecret);
  // Signed in: tokens and MRTR request states are the previewing person's too (their IdP subject).
  const person = options.actor?.sub;
  const sending: SendingContext = {
    firm: keyed.firm,
    ledger: options.sending?.ledger ?? new SendLedger(),
    tokens: {
      issue: (binding) => confirmations.issue(apiKey, binding, person),
      verify: (token, binding) => confirmations.verify(token, apiKey, binding, person),
      idempotencyKey: (id, recipient) => confirmations.idempotencyKey(id, recipient),
    },
    disabled: config.sendingDisabled,
    actor: options.actor,
    audit: options.audit,
  };
  const catalogue = [...TOOLS, ...(options.extraTools ?? [])];
  return {
    config,
    options,
    logger,
    clock: options.clock ?? (() => localToday()),
    api,
    sending,
    // The one redaction (src/text/redact.ts) where results leave the server: the key and every secret
    // setting. Service text was already redacted as the API client read it, before any cap.
    seal: keyed.seal,
    redact: keyed.redact,
    // The one catalogue of the firm's file: tools, tools/list, resources and prompts all read it.
    templates: templateCatalogue(config.templatesFile),
    catalogue,
    offered: catalogue.filter((t) => !(config.readOnly && !t.annotations.readOnlyHint)),
  };
}

export type ServerParts = ReturnType<typeof serverContext>;
