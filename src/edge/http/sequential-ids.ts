// Ids for responses and requests, cheaper than a UUID each.

/** Unique ids without a UUID per request: a random per-process prefix and a counter. */
export function sequentialIds(prefix: string): () => string {
  let n = 0;
  return () => `${prefix}${(++n).toString(36).padStart(6, '0')}`;
}
