// A continuation handle: what a search tool hands back when it showed fewer matches than there are, and takes
// again for the next ones. It is the call's own arguments plus how many matches came before, base64url-encoded;
// the arguments are checked by the tool's schema (and the caller's scopes) again when it comes back, so a handle
// can ask for nothing its arguments could not. It may also carry the server's own cursor (the URL of the page
// where the next match sits), so a long walk costs each page once instead of searching from the start every time.
// The position (`skip`, the cursor) is what the arguments cannot vouch for, and a made-up one costs a search of
// everything before it, so every handle is sealed: an HMAC over the whole handle and the caller, under a key this
// process drew at start. A handle whose seal fails (forged, another caller's, made before a restart or by another
// replica) keeps its arguments and nothing else: the walk starts again at the first match (issue 28).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

const cursorSchema = z.object({
  /** A page of the earlier search, as the FHIR client returned it (`pageStarts`). */
  url: z.string().max(3000),
  /** How many of that page's matches came before the next one to show. */
  offset: z.int().min(0).max(1_000_000),
  /** The search's total, for servers that report it on the first page only. */
  total: z.int().min(0).optional(),
});
export type SearchCursor = z.infer<typeof cursorSchema>;

const handleSchema = z.object({
  v: z.literal(1),
  tool: z.string(),
  args: z.record(z.string(), z.unknown()),
  skip: z.int().min(0).max(1_000_000),
  cursor: cursorSchema.optional(),
  seal: z.string().optional(),
});
export type ContinuationHandle = Omit<z.infer<typeof handleSchema>, 'v' | 'seal'>;

/** The longest handle a tool accepts back; a cursor that would make it longer is left out. */
export const MAX_HANDLE_CHARS = 4000;

const KEY = randomBytes(32);

function sealOf(h: ContinuationHandle, caller: string): Buffer {
  const { tool, args, skip, cursor } = h;
  return createHmac('sha256', KEY)
    .update(JSON.stringify([caller, tool, args, skip, cursor]))
    .digest();
}

const encode = (value: object) => Buffer.from(JSON.stringify({ v: 1, ...value })).toString('base64url');

/** The handle for `caller` (who the tools run for: the key and its grant); the cursor is dropped if it does not fit. */
export function encodeContinuation(h: ContinuationHandle, caller = ''): string {
  const plain = { tool: h.tool, args: h.args, skip: h.skip };
  const sealedPlain = () => encode({ ...plain, seal: sealOf(plain, caller).toString('base64url') });
  if (!h.cursor) return sealedPlain();
  const sealed = encode({ ...plain, cursor: h.cursor, seal: sealOf(h, caller).toString('base64url') });
  return sealed.length <= MAX_HANDLE_CHARS ? sealed : sealedPlain();
}

/**
 * The handle, or undefined when it is not one this tool made. Its position (skip and cursor) only when its seal
 * holds for `caller`; otherwise `sealed: false` and skip 0, the first match.
 */
export function decodeContinuation(text: string, tool: string, caller = ''): (ContinuationHandle & { sealed: boolean }) | undefined {
  try {
    const parsed = handleSchema.safeParse(JSON.parse(Buffer.from(text, 'base64url').toString('utf8')));
    if (!parsed.success || parsed.data.tool !== tool) return undefined;
    const { v: _v, seal, ...handle } = parsed.data;
    const given = seal ? Buffer.from(seal, 'base64url') : Buffer.alloc(0);
    const expected = sealOf(handle, caller);
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { ...handle, sealed: true };
    return { tool: handle.tool, args: handle.args, skip: 0, sealed: false };
  } catch {
    return undefined;
  }
}
