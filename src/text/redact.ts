import type { CallToolResult, InputRequiredResult } from '@modelcontextprotocol/server';
import { createHmac, randomBytes } from 'node:crypto';
import { replaceInvisible } from './invisible.js';

/**
 * The one redaction: every secret (the API key, the token secret) becomes "[redacted]" wherever a
 * string may leave the server. It is applied to raw strings before anything cuts them — the API
 * client redacts every string the service sends as it reads it (records, error bodies, headers),
 * before a record field or a message is capped — and again at every sink (results and their
 * structuredContent, stderr and MCP logging, the team-mode access log), so no cut can ever leave
 * a prefix of a secret behind.
 *
 * A secret is found however it is spelt: as is, in any letter case, JSON-escaped, URL-encoded
 * (either hex case), with invisible characters between its letters (which the renderer would
 * remove, joining it again), or in compatibility forms (full-width letters) that NFKC folds back.
 */
export type Redact = (text: string) => string;

const REDACTED = '[redacted]';
/** Shorter values are not treated as secrets (they would mask ordinary words). */
const MIN_SECRET = 4;

const identity: Redact = (text) => text;
/** Anything but printable ASCII: the only text where invisible characters or compatibility forms can hide a secret. */
const ODD = /[^\x20-\x7e]/;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** How a secret may be spelt in text that reaches us or that we write. */
function spellings(secret: string): string[] {
  const url = encodeURIComponent(secret);
  return [secret, JSON.stringify(secret).slice(1, -1), url, url.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())];
}

export function redactor(secrets: readonly (string | undefined | null)[]): Redact {
  const hidden = [...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length >= MIN_SECRET))];
  if (hidden.length === 0) return identity;
  const forms = [...new Set(hidden.flatMap(spellings))].sort((a, b) => b.length - a.length);
  const source = forms.map(escapeRegExp).join('|');
  const all = new RegExp(source, 'gi');
  const any = new RegExp(source, 'i');
  const shortest = Math.min(...hidden.map((s) => s.length));
  return (text) => {
    if (typeof text !== 'string') return text;
    // Shorter than every secret cannot hold one, unless compatibility forms lengthen it under NFKC (ﬁ → fi).
    if (text.length < shortest && !ODD.test(text)) return text;
    let out = any.test(text) ? text.replace(all, REDACTED) : text;
    // Letters kept apart only by invisible characters, or written in compatibility forms (full-width,
    // the Kelvin sign), read as the secret once the renderer removes the one or a reader sees the other.
    if (ODD.test(out)) {
      const seen = replaceInvisible(out.normalize('NFKC'));
      if (any.test(seen)) out = seen.replace(all, REDACTED);
    }
    return out;
  };
}

/**
 * Frozen values (answers a tool keeps and shares) found to hold no secret, with the secrets they were
 * checked against (as `secretsMark` names them): such a value is handed on as it is, not walked again.
 */
const clean = new WeakMap<object, string>();
/** Names a set of secrets without holding any of them: an HMAC under a key that lives only in this process. */
const MARK_KEY = randomBytes(32);
function secretsMark(secrets: readonly string[]): string {
  return createHmac('sha256', MARK_KEY)
    .update([...secrets].sort().join('\0'))
    .digest('base64url');
}

/**
 * Every string of a JSON-like value redacted, keys included; nesting beyond 64 levels is cut off (results are never that deep).
 * With `mark` (the secrets `redact` hides, as secretsMark names them), a frozen object already found clean under it is not walked again.
 */
function redactDeep<T>(value: T, redact: Redact, mark?: string): T {
  if (redact === identity) return value;
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return redact(v);
    if (!v || typeof v !== 'object') return v;
    if (depth > 64) return null;
    const shared = mark !== undefined && Object.isFrozen(v);
    if (shared && clean.get(v) === mark) return v;
    // A copy is made only once something changes: a clean value (the usual answer) goes on as it is.
    let out: unknown[] | Record<string, unknown> | undefined;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        const y = walk(x, depth + 1);
        if (out === undefined && y !== x) out = v.slice(0, i);
        if (out !== undefined) (out as unknown[]).push(y);
      }
    } else {
      const record = v as Record<string, unknown>;
      const keys = Object.keys(record);
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]!;
        const x = record[k];
        const key = redact(k);
        const y = walk(x, depth + 1);
        if (out === undefined && (key !== k || y !== x)) {
          const copy: Record<string, unknown> = {};
          for (let j = 0; j < i; j++) copy[keys[j]!] = record[keys[j]!];
          out = copy;
        }
        if (out !== undefined) (out as Record<string, unknown>)[key] = y;
      }
    }
    if (out !== undefined) return out;
    if (shared) clean.set(v, mark);
    return v;
  };
  return walk(value, 0) as T;
}

/** The seal where results leave the server: every string of a tool result, text and structuredContent alike. */
export function sealer(secrets: readonly (string | undefined | null)[]): <R extends CallToolResult | InputRequiredResult>(result: R) => R {
  const hidden = secrets.filter((s): s is string => typeof s === 'string' && s.length >= MIN_SECRET);
  const redact = redactor(hidden);
  const mark = hidden.length ? secretsMark(hidden) : undefined;
  return (result) => redactDeep(result, redact, mark);
}
