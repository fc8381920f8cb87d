// Constant-time API key check: every configured key is compared (no early exit) over equal-length digests.
import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (s: string) => createHash('sha256').update(s).digest();

export function createApiKeyChecker(keys: string[]): (presented: string | undefined) => boolean {
  const digests = keys.map(digest);
  return (presented) => {
    const candidate = digest(presented ?? '');
    let ok = false;
    for (const d of digests) ok = timingSafeEqual(d, candidate) || ok;
    return ok && presented !== undefined;
  };
}

export function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m?.[1];
}
