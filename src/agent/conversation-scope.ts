// Which caller and which conversation a tool call belongs to, for write idempotency. A conversation is known by
// its users' words: the client sends them again, unchanged, on a retry and on the follow-up after client tool
// calls, while the assistant turns it echoes back may differ in small ways (null vs "" content, extra fields).
import { createHash } from 'node:crypto';
import type { ChatMessage } from '../vocabulary/openai/chat-request.ts';

export function conversationScope(caller: string, messages: ChatMessage[]): string {
  const hash = createHash('sha256').update(caller);
  for (const m of messages) {
    if (m.role !== 'user') continue;
    hash.update('\0');
    hash.update(typeof m.content === 'string' ? m.content : JSON.stringify(m.content));
  }
  return hash.digest('base64url').slice(0, 22);
}
