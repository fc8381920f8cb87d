// Constant-time API key lookup: every configured key is compared (no early exit) over equal-length digests.
import { timingSafeEqual } from 'node:crypto';
import { sha256Of, type ApiKeyEntry } from './api-keys-file.ts';
import type { KeyAccess } from './key-access.ts';

/** The presented key's access, or undefined when it is no configured key. */
export function createApiKeyResolver(entries: ApiKeyEntry[]): (presented: string | undefined) => KeyAccess | undefined {
  return (presented) => {
    const candidate = sha256Of(presented ?? '');
    let found: KeyAccess | undefined;
    for (const e of entries) if (timingSafeEqual(e.sha256, candidate)) found = e.access;
    return presented === undefined ? undefined : found;
  };
}

export function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m?.[1];
}
