// A keep-alive client sends the same Authorization header on every request of its connection, and hashing it again
// each time (SHA-256, then a constant-time pass over every configured key) was ~4% of the gateway's CPU on a
// pass-through request (issue 30). So a connection remembers the header that last resolved to a key, and a request
// that repeats it byte for byte gets the same access. The comparison is constant-time too: a proxy in front may
// carry several clients' requests on one connection. Keys are fixed for the process's life, so nothing goes stale.
import { timingSafeEqual } from 'node:crypto';
import type { KeyAccess } from './key-access.ts';

interface Remembered {
  header: Buffer;
  access: KeyAccess;
}

/** `resolve` the header's access, or the connection's remembered one when it sent this very header before. */
export function connectionKeyMemo(
  resolve: (header: string | undefined) => KeyAccess | undefined,
): (connection: object | undefined, header: string | undefined) => KeyAccess | undefined {
  const remembered = new WeakMap<object, Remembered>();
  return (connection, header) => {
    // No connection object (an injected request may lack one): nothing to remember it by.
    if (header === undefined || typeof connection !== 'object' || connection === null) return resolve(header);
    const given = Buffer.from(header);
    const last = remembered.get(connection);
    if (last && last.header.length === given.length && timingSafeEqual(last.header, given)) return last.access;
    const access = resolve(header);
    // Only a key that resolved: a refused header is hashed again on every try.
    if (access) remembered.set(connection, { header: given, access });
    else remembered.delete(connection);
    return access;
  };
}
