/**
 * Limits every message is held to before anything parses it further (both transports): a body or
 * line nested deeper than MAX_JSON_DEPTH is refused as it arrives, so no recursive reader after it
 * (the SDK's message schemas, argument decoding, validation) ever meets one deep enough to overflow
 * the stack. No tool's arguments come near it: the deepest are a batch's recipients' items (6).
 */
const MAX_JSON_DEPTH = 64;

/**
 * True when JSON text opens more than `max` arrays or objects inside one another. Linear, with no
 * recursion and no allocation; brackets inside strings do not count. Text that is not JSON gets a
 * meaningless answer: JSON.parse judges that.
 */
export function nestsDeeper(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** What a refused message is told, in JSON-RPC words (Invalid Request). */
export const TOO_DEEP = `Invalid Request: the message nests arrays or objects more than ${MAX_JSON_DEPTH} deep.`;

/** The id of a single JSON-RPC request, to answer it by; null for a batch, a notification or junk. */
export function requestId(message: unknown): string | number | null {
  const id = message && typeof message === 'object' && !Array.isArray(message) ? (message as { id?: unknown }).id : undefined;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}
