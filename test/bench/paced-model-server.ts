// A paced fake model for the soak: an OpenAI-compatible server in the DeepSeek dialect that answers each
// conversation in two steps, one SSE event every `paceMs`, like a model server generating tokens.
// Step 1 (no tool message yet) replays the recorded DeepSeek tool call (fixtures/upstream/deepseek-tool-call.chunks.txt)
// for the patient named in the request; step 2 streams `tokens` content tokens and stops.
import { readFileSync } from 'node:fs';
import http from 'node:http';

export const PACED_MODEL = 'deepseek-reasoner';
const RECORDED_PATIENT = 'S1000001';
const created = 1_763_800_000;

const recordedToolCall = readFileSync(new URL('../../fixtures/upstream/deepseek-tool-call.chunks.txt', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim());

/** SSE events of step 1, the recorded tool call with the patient swapped in. */
function toolCallEvents(patient: string): string[] {
  return [...recordedToolCall.map((l) => `data: ${l.replaceAll(RECORDED_PATIENT, patient)}\n\n`), 'data: [DONE]\n\n'];
}

/** SSE events of step 2: role, `tokens` content tokens, the finish with usage, [DONE]. */
function answerEvents(tokens: number): string[] {
  const chunk = (delta: unknown, finish: string | null = null, usage?: unknown) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-soak',
      object: 'chat.completion.chunk',
      created,
      model: PACED_MODEL,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(usage ? { usage } : {}),
    })}\n\n`;
  const events = [chunk({ role: 'assistant', content: '', reasoning_content: null })];
  for (let i = 0; i < tokens; i++) events.push(chunk({ content: `t${i} ` }));
  events.push(chunk({ content: '' }, 'stop', { prompt_tokens: 900, completion_tokens: tokens, total_tokens: 900 + tokens }));
  events.push('data: [DONE]\n\n');
  return events;
}

/** The ideal total of one conversation: every event of both steps, `paceMs` apart. */
export function idealConversationMs(tokens: number, paceMs: number): number {
  return (toolCallEvents(RECORDED_PATIENT).length + answerEvents(tokens).length) * paceMs;
}

/** Headers first, then each event after `paceMs`, as a model server does. */
function writePaced(res: http.ServerResponse, events: string[], paceMs: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
  let i = 0;
  const next = () => {
    if (res.destroyed) return;
    res.write(events[i++]);
    if (i < events.length) setTimeout(next, paceMs);
    else res.end();
  };
  setTimeout(next, paceMs);
}

export async function startPacedModel(o: { tokens: number; paceMs: number }): Promise<{ port: number; close(): Promise<void> }> {
  const answer = answerEvents(o.tokens);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`{"object":"list","data":[{"id":"${PACED_MODEL}","object":"model","owned_by":"deepseek"}]}`);
        return;
      }
      const body = Buffer.concat(chunks).toString();
      if (req.url !== '/v1/chat/completions' || !/"stream":\s*true/.test(body)) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"paced model: streamed chat completions only","type":"invalid_request_error"}}');
        return;
      }
      // The gateway's request carries the user's question; its tool message marks the second step.
      const patient = /S1\d{6}/.exec(body)?.[0] ?? RECORDED_PATIENT;
      writePaced(res, /"role":\s*"tool"/.test(body) ? answer : toolCallEvents(patient), o.paceMs);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}
