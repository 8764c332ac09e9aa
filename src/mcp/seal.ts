import type { CallToolResult, InputRequiredResult } from '@modelcontextprotocol/server';

/**
 * The one redaction where results leave the server: every occurrence of the key or another secret
 * setting, in the text and anywhere in structuredContent, becomes "[redacted]" — whatever put it
 * there (a service that echoes the key in an error or a record, a bug).
 */
/** Shortest part of a secret, cut off by a cap ("…"), that is still masked. */
const MIN_FRAGMENT = 6;

export function redactor(secrets: (string | undefined)[]): (text: string) => string {
  const hidden = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 4);
  return (text) => {
    let out = hidden.some((s) => text.includes(s)) ? hidden.reduce((t, s) => t.split(s).join('[redacted]'), text) : text;
    // Service text is capped before it leaves (one line, "…" at the cut): a secret straddling the
    // cut survives only as its beginning followed by "…", so that is masked too.
    if (out.includes('…')) {
      for (const s of hidden) {
        for (let n = s.length - 1; n >= MIN_FRAGMENT; n--) {
          const cut = `${s.slice(0, n)}…`;
          if (out.includes(cut)) out = out.split(cut).join('[redacted]…');
        }
      }
    }
    return out;
  };
}

export function sealer(secrets: (string | undefined)[]): <R extends CallToolResult | InputRequiredResult>(result: R) => R {
  if (!secrets.some((s) => s && s.length >= 4)) return <R>(r: R) => r;
  const redact = redactor(secrets);
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return redact(value);
    if (!value || typeof value !== 'object' || depth > 64) return value;
    if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[redact(k)] = walk(v, depth + 1);
    return out;
  };
  return <R extends CallToolResult | InputRequiredResult>(result: R) => walk(result, 0) as R;
}
