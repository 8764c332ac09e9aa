import { oneLine } from '../text/render.js';

/**
 * Team mode's access log: one JSON line per request. Each line goes through the one redaction (the
 * request's key, the token secret) before anything in it is cut.
 */
export function accessLogger(write: (line: string) => void): (entry: Record<string, unknown>, redact: (text: string) => string) => void {
  return (entry, redact) => {
    const clean: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(entry)) clean[k] = typeof v === 'string' ? oneLine(redact(v), 200) : v;
    write(`${JSON.stringify({ time: new Date().toISOString(), ...clean })}\n`);
  };
}
