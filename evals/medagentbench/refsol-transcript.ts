// What refsol.py reads from an AgentBench transcript: the accepted POSTs (an agent message containing "POST",
// answered by a user message containing "POST request accepted"; url = the first line without its first four
// characters, payload = the rest as JSON, skipped when it does not parse) and whether any agent message says POST.
import { pyJsonLoads, type PyValue } from './python-json-loads.ts';
import { PyError, pyStrip } from './python-ops.ts';

export interface RefsolMessage {
  role: 'user' | 'agent';
  content: string;
}

export interface RefsolPost {
  url: string;
  payload: PyValue;
}

export function extractPosts(history: readonly RefsolMessage[]): RefsolPost[] {
  const posts: RefsolPost[] = [];
  history.forEach((m, idx) => {
    if (m.role !== 'agent' || !m.content.includes('POST')) return;
    // refsol reads the next message unguarded: a POST as the last message raises IndexError (a fail).
    const next = history[idx + 1];
    if (!next) throw new PyError('IndexError: list index out of range');
    if (!next.content.includes('POST request accepted')) return;
    const lines = m.content.split('\n');
    try {
      posts.push({ url: pyStrip([...lines[0]].slice(4).join('')), payload: pyJsonLoads(lines.slice(1).join('\n')) });
    } catch {
      // refsol skips a POST whose payload does not parse
    }
  });
  return posts;
}

export function hasPost(history: readonly RefsolMessage[]): boolean {
  return history.some((m) => m.role === 'agent' && m.content.includes('POST'));
}
