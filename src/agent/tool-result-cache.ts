// The tool-result cache contract and its in-process implementation. With REDIS_URL the replicas share
// src/edge/redis/redis-tool-result-cache.ts instead, so a follow-up to a mixed turn may land on any replica.

/** A server tool result kept for a client's follow-up to a mixed turn. */
export interface CachedToolResult {
  name: string;
  arguments: string;
  content: string;
}

export interface ToolResultCache {
  /** Never rejects: a store that fails answers undefined (a miss, so the call is re-executed). */
  get(toolCallId: string): Promise<CachedToolResult | undefined>;
  /** Never rejects: a store that fails drops the entry. Resolves once a follow-up on another replica can see it. */
  set(toolCallId: string, result: CachedToolResult): Promise<void>;
}

/** Bounded by entry count, oldest evicted first; a miss is harmless (the call is re-executed). */
export function createToolResultCache(maxEntries = 1000): ToolResultCache {
  const entries = new Map<string, CachedToolResult>();
  return {
    get: async (id) => entries.get(id),
    async set(id, result) {
      if (maxEntries <= 0) return;
      entries.delete(id);
      entries.set(id, result);
      while (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    },
  };
}
