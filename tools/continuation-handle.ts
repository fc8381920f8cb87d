// A continuation handle: what a search tool hands back when it showed fewer matches than there are, and takes
// again for the next ones. It is the call's own arguments plus how many matches came before, base64url-encoded;
// nothing secret, and the arguments are checked by the tool's schema again when it comes back.
import { z } from 'zod';

const handleSchema = z.object({
  v: z.literal(1),
  tool: z.string(),
  args: z.record(z.string(), z.unknown()),
  skip: z.int().min(0).max(1_000_000),
});
export type ContinuationHandle = z.infer<typeof handleSchema>;

export function encodeContinuation(h: Omit<ContinuationHandle, 'v'>): string {
  return Buffer.from(JSON.stringify({ v: 1, ...h })).toString('base64url');
}

/** The handle, or undefined when it is not one this tool made. */
export function decodeContinuation(text: string, tool: string): ContinuationHandle | undefined {
  try {
    const parsed = handleSchema.safeParse(JSON.parse(Buffer.from(text, 'base64url').toString('utf8')));
    return parsed.success && parsed.data.tool === tool ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
