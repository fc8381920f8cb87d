// `npm run scripted-model [-- --port 8383]`: the deterministic OpenAI-compatible model behind the README's worked
// example, so a reader can reproduce it without a GPU. Step 1 calls `search_observations` for the HbA1c (LOINC
// 4548-4) of the patient id (S + 7 digits) in the last user message; step 2 answers from the tool result. It streams
// (reasoning in several `reasoning_content` fragments, so clients' accumulation shows) and answers plain JSON.
// A script has no tokenizer: its usage figures are fixed, so the example's numbers come out the same every run.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';

const HBA1C = 'http://loinc.org|4548-4';
const USAGE_CALL = { prompt_tokens: 812, completion_tokens: 41, total_tokens: 853, prompt_tokens_details: { cached_tokens: 0 } };
const USAGE_ANSWER = { prompt_tokens: 1010, completion_tokens: 30, total_tokens: 1040, prompt_tokens_details: { cached_tokens: 768 } };

const requestSchema = z.object({
  messages: z.array(z.object({ role: z.string(), content: z.unknown().optional() }).passthrough()).min(1),
  tools: z.array(z.object({ function: z.object({ name: z.string() }).passthrough() }).passthrough()).optional(),
  stream: z.boolean().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).passthrough().nullish(),
});
type ChatRequest = z.infer<typeof requestSchema>;

const resultSchema = z.object({
  content: z.object({
    results: z.array(
      z.object({ date: z.string().optional(), value: z.object({ value: z.number(), unit: z.string().optional() }).optional() }),
    ),
  }),
});

interface Step {
  reasoning: string;
  content: string | null;
  toolCall?: { id: string; name: string; arguments: string };
  usage: typeof USAGE_CALL;
}

const text = (content: unknown) =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((p) => (p as { text?: string }).text ?? '').join('') : '';

/** The script: what the model "says" given the conversation so far. */
function nextStep(req: ChatRequest): Step {
  const lastUser = req.messages.findLastIndex((m) => m.role === 'user');
  const patient = text(req.messages[lastUser]?.content).match(/S\d{7}/)?.[0];
  const toolResult = req.messages.slice(lastUser + 1).findLast((m) => m.role === 'tool');
  if (toolResult) {
    const parsed = resultSchema.safeParse(safeJson(text(toolResult.content)));
    const latest = parsed.success ? parsed.data.content.results[0] : undefined;
    let answer = latest?.value
      ? `The latest HbA1c of ${patient} is ${latest.value.value} ${latest.value.unit ?? ''} (${latest.date?.slice(0, 10) ?? 'undated'}).`.replace(
          '  ',
          ' ',
        )
      : `No HbA1c result was found for ${patient}.`;
    // The eval harness asks for a FINISH([...]) list; follow it, so a scripted run is graded like a model's.
    if (asksForFinish(req)) answer += ` FINISH(${JSON.stringify(latest?.value ? [latest.value.value] : [])})`;
    return { reasoning: 'The newest result is the answer.', content: answer, usage: USAGE_ANSWER };
  }
  const canSearch = req.tools?.some((t) => t.function.name === 'search_observations');
  if (!patient || !canSearch) {
    const content = patient ? 'I have no tool to read the record.' : 'Which patient? Give an id such as S1000002.';
    return { reasoning: 'I cannot search without a patient id and the search tool.', content, usage: USAGE_ANSWER };
  }
  return {
    reasoning: `I need the HbA1c results for ${patient}, newest first.`,
    content: null,
    toolCall: { id: `call_a1c_${patient}`, name: 'search_observations', arguments: JSON.stringify({ patient, code: HBA1C, count: 1 }) },
    usage: USAGE_CALL,
  };
}

const asksForFinish = (req: ChatRequest) => req.messages.some((m) => m.role === 'system' && text(m.content).includes('FINISH(['));

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/** Splits after each space, so a stream carries several fragments of every text. */
const fragments = (s: string) => s.match(/\S+\s*/g) ?? [];

function completion(step: Step) {
  const message = {
    role: 'assistant',
    content: step.content,
    reasoning_content: step.reasoning,
    ...(step.toolCall
      ? {
          tool_calls: [
            { id: step.toolCall.id, type: 'function', function: { name: step.toolCall.name, arguments: step.toolCall.arguments } },
          ],
        }
      : {}),
  };
  const finish_reason = step.toolCall ? 'tool_calls' : 'stop';
  return {
    id: 'chatcmpl-scripted',
    object: 'chat.completion',
    created: 0,
    model: 'scripted',
    choices: [{ index: 0, message, finish_reason }],
    usage: step.usage,
  };
}

function chunks(step: Step, includeUsage: boolean): unknown[] {
  const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({
    id: 'chatcmpl-scripted',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'scripted',
    choices: [{ index: 0, delta, finish_reason }],
  });
  const out: unknown[] = [chunk({ role: 'assistant', content: '' })];
  for (const piece of fragments(step.reasoning)) out.push(chunk({ reasoning_content: piece }));
  for (const piece of fragments(step.content ?? '')) out.push(chunk({ content: piece }));
  const call = step.toolCall;
  if (call) {
    out.push(chunk({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    const half = Math.floor(call.arguments.length / 2);
    for (const a of [call.arguments.slice(0, half), call.arguments.slice(half)])
      out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: a } }] }));
  }
  out.push(chunk({}, call ? 'tool_calls' : 'stop'));
  if (includeUsage)
    out.push({ id: 'chatcmpl-scripted', object: 'chat.completion.chunk', created: 0, model: 'scripted', choices: [], usage: step.usage });
  return out;
}

async function handle(req: IncomingMessage, res: ServerResponse, onChat?: (body: ChatRequest) => void): Promise<void> {
  const send = (status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const url = req.url ?? '';
  if (req.method === 'GET' && url.endsWith('/models')) {
    return send(200, { object: 'list', data: [{ id: 'scripted', object: 'model', created: 0, owned_by: 'scripted-model' }] });
  }
  if (req.method !== 'POST' || !url.endsWith('/chat/completions'))
    return send(404, { error: { message: 'not found', type: 'invalid_request_error' } });
  let raw = '';
  for await (const part of req) raw += part;
  const parsed = requestSchema.safeParse(safeJson(raw));
  if (!parsed.success)
    return send(400, { error: { message: `bad request: ${parsed.error.issues[0]?.message}`, type: 'invalid_request_error' } });
  onChat?.(parsed.data);
  const step = nextStep(parsed.data);
  if (!parsed.data.stream) return send(200, completion(step));
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const c of chunks(step, parsed.data.stream_options?.include_usage === true)) res.write(`data: ${JSON.stringify(c)}\n\n`);
  res.end('data: [DONE]\n\n');
}

export interface ScriptedModel {
  /** The OpenAI-compatible base URL, ending in /v1. */
  baseUrl: string;
  close(): Promise<void>;
}

export async function startScriptedModel({
  port = 8383,
  host = '127.0.0.1',
  onChat,
}: {
  port?: number;
  host?: string;
  /** Sees every chat request (the README test reads the tool message the model was given). */
  onChat?: (body: ChatRequest) => void;
} = {}): Promise<ScriptedModel> {
  const server = createServer((req, res) => {
    handle(req, res, onChat).catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  const address = server.address() as AddressInfo;
  return {
    baseUrl: `http://${host}:${address.port}/v1`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '8383' } } });
  const model = await startScriptedModel({ port: Number(values.port) });
  process.stdout.write(`scripted model on ${model.baseUrl}\n`);
  const stop = () => void model.close().then(() => process.exit(0));
  process.once('SIGINT', stop).once('SIGTERM', stop);
}
