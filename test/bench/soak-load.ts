// The soak's client side: one conversation through the gateway, or the same two model calls straight to the fake.
// SSE is read event by event and only the few events that decide the outcome are JSON-parsed, so the load
// generator stays light beside the two servers on a 2-core machine.
import type { Pool } from 'undici';

export const SOAK_API_KEY = 'soak-bench-key';
export const SOAK_MODEL_ID = 'fhir-agent-gateway/clinical-reasoner';
const SOAK_TOOL = 'search_observations';

/** One conversation: its total time, request to the end of the stream, and why it failed if it did. */
export interface StreamOutcome {
  ms: number;
  error?: string;
}

interface SseSummary {
  done: boolean;
  finishReasons: string[];
  /** Content deltas that carried text. */
  contentEvents: number;
  /** The loop's closing `fhir_agent` event (`event: 'done'`), with the tool calls it ran. */
  audit?: { stop_reason?: string; tool_calls?: Array<{ name: string; ok: boolean }> };
}

/** Splits the body into SSE events and parses only the ones whose markers say they decide the outcome. */
class SseScanner {
  readonly summary: SseSummary = { done: false, finishReasons: [], contentEvents: 0 };
  #rest = '';

  push(text: string): void {
    let buf = this.#rest + text;
    let end: number;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      this.#event(buf.slice(0, end));
      buf = buf.slice(end + 2);
    }
    this.#rest = buf;
  }

  #event(e: string): void {
    if (!e.startsWith('data: ')) return; // keep-alive comments
    if (e === 'data: [DONE]') {
      this.summary.done = true;
    } else if (e.includes('"fhir_agent"') && e.includes('"event":"done"')) {
      this.summary.audit = JSON.parse(e.slice(6)).fhir_agent;
    } else if (e.includes('"finish_reason":"')) {
      this.summary.finishReasons.push(JSON.parse(e.slice(6)).choices[0]?.finish_reason);
    } else if (e.includes('"content":"') && !e.includes('"content":""')) {
      this.summary.contentEvents++;
    }
  }
}

async function post(pool: Pool, path: string, body: unknown, headers: Record<string, string>): Promise<SseSummary> {
  const res = await pool.request({
    path,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${(await res.body.text()).slice(0, 200)}`);
  const scanner = new SseScanner();
  res.body.setEncoding('utf8');
  for await (const chunk of res.body) scanner.push(chunk as string);
  return scanner.summary;
}

const question = (patient: string) => ({ role: 'user', content: `What is the latest HbA1c of patient ${patient}?` });

/** What a correct conversation shows: one stop after `tokens` tokens, and the loop's audit naming the tool call. */
function checkConversation(s: SseSummary, tokens: number): string | undefined {
  if (!s.done) return 'stream ended without [DONE]';
  if (s.finishReasons.join() !== 'stop') return `finish_reason ${JSON.stringify(s.finishReasons)}`;
  if (s.contentEvents < tokens) return `${s.contentEvents} content events, expected ${tokens}`;
  const calls = s.audit?.tool_calls ?? [];
  if (s.audit?.stop_reason !== 'final' || calls.length !== 1 || calls[0]!.name !== SOAK_TOOL || !calls[0]!.ok) {
    return `audit ${JSON.stringify(s.audit)?.slice(0, 300)}`;
  }
  return undefined;
}

/** One streamed chat request through the gateway's tool loop. */
export async function gatewayConversation(pool: Pool, patient: string, tokens: number): Promise<StreamOutcome> {
  const t0 = performance.now();
  try {
    const s = await post(
      pool,
      '/v1/chat/completions',
      { model: SOAK_MODEL_ID, stream: true, messages: [question(patient)] },
      { authorization: `Bearer ${SOAK_API_KEY}` },
    );
    const error = checkConversation(s, tokens);
    return { ms: performance.now() - t0, ...(error ? { error } : {}) };
  } catch (err) {
    return { ms: performance.now() - t0, error: (err as Error).message };
  }
}

/** The fake's own pacing: the same two model calls, straight to it, with no gateway and no tool in between. */
export async function directConversation(pool: Pool, patient: string, tokens: number): Promise<StreamOutcome> {
  const t0 = performance.now();
  try {
    const call = { id: 'call_0_a1b2', type: 'function', function: { name: SOAK_TOOL, arguments: JSON.stringify({ patient }) } };
    const first = await post(pool, '/v1/chat/completions', { stream: true, messages: [question(patient)] }, {});
    const second = await post(
      pool,
      '/v1/chat/completions',
      {
        stream: true,
        messages: [
          question(patient),
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: call.id, content: '{}' },
        ],
      },
      {},
    );
    const error =
      !first.done || first.finishReasons.join() !== 'tool_calls'
        ? `step 1: ${JSON.stringify(first)}`
        : !second.done || second.finishReasons.join() !== 'stop' || second.contentEvents < tokens
          ? `step 2: ${JSON.stringify(second)}`
          : undefined;
    return { ms: performance.now() - t0, ...(error ? { error } : {}) };
  } catch (err) {
    return { ms: performance.now() - t0, error: (err as Error).message };
  }
}
