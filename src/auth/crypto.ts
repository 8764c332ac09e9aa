import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/** Sign-in's small cryptography: random values, digests, constant-time comparison, and keys derived from the auth secret. */

export const random = () => randomBytes(32).toString('base64url');
export const digest = (text: string) => createHash('sha256').update(text).digest('base64url');

/** Two texts compared in constant time. */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Keys derived from the auth secret: rotating it ends every refresh token and every identity provider token kept. */
export function secretKeys(secret: Uint8Array) {
  const refreshSecret = Buffer.from(hkdfSync('sha256', secret, 'docreq-mcp', 'refresh tokens', 32));
  const sealKey = Buffer.from(hkdfSync('sha256', secret, 'docreq-mcp', 'identity provider tokens', 32));
  return {
    /** Where a refresh token is stored: under its HMAC, never the token itself. */
    refreshKey: (token: string) => `refresh:${createHmac('sha256', refreshSecret).update(token).digest('base64url')}`,
    /** An identity provider's refresh token, encrypted (AES-256-GCM) before it reaches the store. */
    seal(text: string): string {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', sealKey, iv);
      const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    },
    open(sealed: string): string | undefined {
      try {
        const bytes = Buffer.from(sealed, 'base64url');
        const decipher = createDecipheriv('aes-256-gcm', sealKey, bytes.subarray(0, 12));
        decipher.setAuthTag(bytes.subarray(12, 28));
        return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
      } catch {
        return undefined;
      }
    },
  };
}
