/** A server tool result kept for a client's follow-up to a mixed turn. */
export interface CachedToolResult {
  name: string;
  arguments: string;
  content: string;
}

export interface ToolResultCache {
  get(toolCallId: string): CachedToolResult | undefined;
  set(toolCallId: string, result: CachedToolResult): void;
}

/** Bounded by entry count, oldest evicted first; a miss is harmless (the call is re-executed). */
export function createToolResultCache(maxEntries = 1000): ToolResultCache {
  const entries = new Map<string, CachedToolResult>();
  return {
    get: (id) => entries.get(id),
    set(id, result) {
      if (maxEntries <= 0) return;
      entries.delete(id);
      entries.set(id, result);
      while (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    },
  };
}
