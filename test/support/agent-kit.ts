// Helpers for the agent-loop tests: a scripted upstream that answers each step in the format the gateway asked for
// (JSON or SSE), per-test request capture, and a streamed collector built on the openai SDK's stream helper.
import type { ChatCompletion } from 'openai/resources/chat/completions';
import type { RecordedRequest, FakeResponse } from './fake-upstream.ts';
import type { RunningGateway } from './gateway-harness.ts';
import { completionReply, streamReply } from './upstream-replies.ts';

export interface StepSpec {
  reasoning?: string;
  content?: string;
  toolCalls?: Array<{ id: string; name: string; args: unknown }>;
  finishReason?: string;
  usage?: Record<string, unknown>;
  /** Delay before the upstream answers this step. */
  delayMs?: number;
  /** Streamed replies only: delay between SSE chunks. */
  chunkDelayMs?: number;
}

/** Wire usage as an upstream sends it, with cached and reasoning token details. */
export function wireUsage(prompt: number, completion: number, cached = 0, reasoning?: number): Record<string, unknown> {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached },
    ...(reasoning === undefined ? {} : { completion_tokens_details: { reasoning_tokens: reasoning } }),
  };
}

const argsText = (a: unknown) => (typeof a === 'string' ? a : JSON.stringify(a));

/** One step's reply, as JSON or as an SSE stream (reasoning and arguments split into several deltas). */
export function stepReply(s: StepSpec, stream: boolean): FakeResponse {
  const extra: Partial<FakeResponse> = { delayMs: s.delayMs, chunkDelayMs: s.chunkDelayMs };
  if (!stream) {
    return completionReply(
      {
        content: s.content ?? (s.toolCalls?.length ? null : ''),
        reasoning_content: s.reasoning,
        toolCalls: s.toolCalls?.map((t) => ({ id: t.id, name: t.name, arguments: argsText(t.args) })),
        finishReason: s.finishReason,
        usage: s.usage,
      },
      extra,
    );
  }
  return streamReply(
    {
      style: 'reasoning_content',
      reasoning: s.reasoning ? halves(s.reasoning) : [],
      content: s.content ? halves(s.content) : [],
      toolCalls: s.toolCalls?.map((t) => ({ id: t.id, name: t.name, args: halves(argsText(t.args)) })),
      finishReason: s.finishReason,
      usage: s.usage,
    },
    extra,
  );
}

function halves(text: string): string[] {
  if (text.length < 2) return [text];
  const mid = Math.ceil(text.length / 2);
  return [text.slice(0, mid), text.slice(mid)];
}

export interface Script {
  /** Upstream chat requests made since the script was installed, in order. */
  requests: RecordedRequest[];
  /** Bodies of those requests. */
  bodies: () => any[];
}

/**
 * Installs a per-test script: step i of the conversation gets `steps[i]` (a spec, or a function of the request).
 * Past the end the fake answers 500, so an unexpected extra step fails loudly.
 */
export function script(gw: RunningGateway, steps: Array<StepSpec | ((req: RecordedRequest) => StepSpec)>): Script {
  const requests: RecordedRequest[] = [];
  gw.fake.setHandler((req) => {
    const i = requests.length;
    requests.push(req);
    const step = steps[i];
    if (!step) return { status: 500, body: { error: { message: `script: no step ${i}` } } };
    const spec = typeof step === 'function' ? step(req) : step;
    return stepReply(spec, req.body?.stream === true);
  });
  return { requests, bodies: () => requests.map((r) => r.body) };
}

export interface Collected {
  final: ChatCompletion & { fhir_agent?: any; usage?: any };
  chunks: any[];
  /** Every reasoning delta joined (the SDK snapshot keeps only the last reasoning delta). */
  reasoning: string;
  content: string;
  /** `fhir_agent` payloads of the extension chunks (`choices: []`), in order. */
  events: any[];
}

/** Streams through `client.chat.completions.stream(...)` and returns `finalChatCompletion()` plus what arrived. */
export async function streamed(gw: RunningGateway, body: Record<string, unknown>, opts: { signal?: AbortSignal } = {}): Promise<Collected> {
  const stream = gw.client.chat.completions.stream({ model: gw.model, ...body } as never, { signal: opts.signal });
  const chunks: any[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const final = (await stream.finalChatCompletion()) as Collected['final'];
  const deltas = chunks.filter((c) => c.choices?.length).map((c) => c.choices[0].delta ?? {});
  return {
    final,
    chunks,
    reasoning: deltas.map((d) => d.reasoning_content ?? '').join(''),
    content: deltas.map((d) => d.content ?? '').join(''),
    events: chunks.filter((c) => Array.isArray(c.choices) && c.choices.length === 0 && c.fhir_agent).map((c) => c.fhir_agent),
  };
}

/** Non-streamed through `client.chat.completions.create(...)`. */
export async function generated(gw: RunningGateway, body: Record<string, unknown>, opts: { signal?: AbortSignal } = {}) {
  return (await gw.client.chat.completions.create({ model: gw.model, ...body } as never, {
    signal: opts.signal,
  })) as unknown as ChatCompletion & {
    fhir_agent?: any;
    usage?: any;
  };
}

/** The `role: tool` messages of an upstream request body, content parsed when it is JSON (client results may be text). */
export function toolMessages(body: any): Array<{ tool_call_id: string; result: any }> {
  return (body.messages as any[])
    .filter((m) => m.role === 'tool')
    .map((m) => ({ tool_call_id: m.tool_call_id, result: parseMaybe(m.content) }));
}

function parseMaybe(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function.name);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `cond` holds or the time is up. */
export async function until(cond: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await sleep(10);
  }
  return cond();
}

/** FHIR search on the gateway's embedded store (in process). */
export async function fhirSearch(gw: RunningGateway, query: string): Promise<any> {
  const server = gw.fhirServer!;
  const res = await server.fetch(`${server.baseUrl}/${query}`);
  if (!res.ok) throw new Error(`FHIR ${query}: ${res.status} ${await res.text()}`);
  return res.json();
}
