// One fuzz case against each surface, judged against its documented envelope: the gateway's /v1 and /fhir over
// HTTP, and executeTool in process.
import type { FhirClient } from '../../src/fhir/client/fhir-client.ts';
import { executeTool } from '../../src/tools/index.ts';
import { stepReply } from '../support/agent-kit.ts';
import type { RunningGateway } from '../support/gateway-harness.ts';
import type { ChatCase } from './chat-cases.ts';
import { chatSuccessProblem, fhirProblem, openAiErrorProblem, toolResultProblem } from './envelopes.ts';
import type { FhirCase } from './fhir-cases.ts';
import { maxNestingDepth } from './raw-json.ts';
import { HANG_MS, isOutcome, timedFetch, withinHangGuard, type Outcome } from './fuzz-run.ts';
import type { ToolCallCase } from './tool-call-cases.ts';

/** The final answer of the fake model: JSON, so json_object and json_schema requests succeed too. */
const FINAL_ANSWER = '{"answer":"ok"}';
/** A nesting depth past any schema bound (see `bugs the fuzz found` in test/fuzz.test.ts). */
export const KNOWN_DEEP_NESTING = 1000;

/** The last error the gateway logged, for the failure message of a 500. */
function lastLoggedError(gw: RunningGateway): string {
  const line = [...gw.logs].reverse().find((l) => l.includes('"level":50'));
  if (!line) return '(nothing logged)';
  const err = (JSON.parse(line) as { err?: { stack?: string } }).err;
  return err?.stack?.split('\n').slice(0, 4).join(' | ') ?? line.slice(0, 300);
}

function requestedChoices(body: Buffer): number | undefined {
  try {
    // The body parser skips a leading BOM; so does this.
    const n = (JSON.parse(body.toString('utf8').replace(/^\ufeff/, '')) as { n?: unknown }).n;
    return typeof n === 'number' ? n : 1;
  } catch {
    return undefined;
  }
}

export async function exerciseChat(gw: RunningGateway, c: ChatCase): Promise<Outcome> {
  let step = 0;
  gw.fake.setHandler((req) => {
    const calls = c.plan[step++];
    const stream = (req.body as { stream?: unknown } | undefined)?.stream === true;
    if (!calls) return stepReply({ content: FINAL_ANSWER }, stream);
    return stepReply({ toolCalls: calls.map((t, j) => ({ id: `fz_${step}_${j}`, name: t.name, args: t.argsJson })) }, stream);
  });
  const headers: Record<string, string> = {};
  if (c.contentType !== null) headers['content-type'] = c.contentType;
  if (c.authorization !== null) headers.authorization = c.authorization;
  const answer = await timedFetch(`${gw.baseUrl}/v1/chat/completions`, { method: 'POST', headers, body: new Uint8Array(c.body) });
  // The fake keeps every request; a long run must not.
  gw.fake.requests.length = 0;
  if (isOutcome(answer)) return answer;
  const { status, text, ms } = answer;
  const label = String(status);
  if (status === 500) return { label, ms, problem: `HTTP 500: ${text.slice(0, 200)}; logged: ${lastLoggedError(gw)}` };
  gw.logs.length = 0;
  if (status >= 500) {
    // The one 5xx a healthy model can cause: JSON mode, and the answer cut off (max_tokens spent) before any JSON.
    const documented = status === 502 && text.includes('"code":"invalid_json_output"');
    return { label, ms, problem: documented ? openAiErrorProblem(text) : `HTTP ${status} from a healthy upstream: ${text.slice(0, 300)}` };
  }
  if (status >= 400) return { label, ms, problem: openAiErrorProblem(text) };
  if (status !== 200) return { label, ms, problem: `unexpected HTTP ${status}` };
  return { label, ms, problem: chatSuccessProblem(text, answer.contentType, requestedChoices(c.body) ?? 1) };
}

export async function exerciseFhir(gw: RunningGateway, c: FhirCase): Promise<Outcome> {
  const url = `${gw.baseUrl}/fhir${c.path}`;
  const headers: Record<string, string> = { authorization: c.authorized ? `Bearer ${gw.apiKey}` : 'Bearer wrong-key' };
  if (c.contentType) headers['content-type'] = c.contentType;
  const answer = await timedFetch(url, { method: c.method, headers, body: c.body });
  if (isOutcome(answer)) return answer;
  const { status, text, ms } = answer;
  const label = String(status);
  // `..` segments are resolved by the URL parser: such a request may land outside /fhir, in the OpenAI envelope.
  const underFhir = /^\/fhir(\/|$)/.test(new URL(url).pathname);
  if (status >= 500) {
    // test/fhir-search-body-depth.test.ts pins this one; the fuzz counts it apart instead of stopping on it.
    const known =
      status === 500 && c.method === 'POST' && c.path.includes('/_search') && maxNestingDepth(c.body ?? '') > KNOWN_DEEP_NESTING
        ? 'deep-search-body-500'
        : undefined;
    return { label, ms, known, problem: `HTTP ${status}: ${text.slice(0, 300)}; logged: ${lastLoggedError(gw)}` };
  }
  gw.logs.length = 0;
  if (!c.authorized && underFhir && status !== 401) return { label, ms, problem: `HTTP ${status} without a valid key` };
  if (!underFhir) return { label, ms, problem: status >= 400 ? openAiErrorProblem(text) : undefined };
  if (status === 204 && text === '') return { label, ms };
  return { label, ms, problem: fhirProblem(status, text) };
}

export interface ToolCase {
  call: ToolCallCase;
  writesEnabled: boolean;
  /** The request was already cancelled when the tool ran. */
  aborted: boolean;
  callId: string;
}

export async function exerciseTool(fhir: FhirClient, c: ToolCase): Promise<Outcome> {
  const started = performance.now();
  let result: unknown;
  try {
    const done = await withinHangGuard(
      executeTool(c.call.name, c.call.argsJson, {
        fhir,
        now: () => new Date('2024-05-01T12:00:00Z'),
        writesEnabled: c.writesEnabled,
        callId: c.callId,
        signal: c.aborted ? AbortSignal.abort() : undefined,
      }),
    );
    if (!done) return { label: 'hang', ms: performance.now() - started, problem: `executeTool did not settle within ${HANG_MS} ms` };
    result = done.value;
  } catch (err) {
    return { label: 'crash', ms: performance.now() - started, problem: `executeTool threw: ${(err as Error).stack ?? String(err)}` };
  }
  const ms = performance.now() - started;
  const r = result as { ok: boolean; error?: { code: string; message: string; status?: number } };
  const label = `tool:${r?.ok ? 'ok' : (r?.error?.code ?? '?')}`;
  const shape = toolResultProblem(result);
  if (shape) return { label, ms, problem: shape };
  if (r.error?.code === 'internal_error') return { label, ms, problem: `internal_error: ${r.error.message}` };
  if (r.error?.code === 'fhir_error' && (r.error.status ?? 0) >= 500)
    return { label, ms, problem: `the embedded FHIR server failed: ${r.error.status} ${r.error.message}` };
  if (c.aborted && r.ok) return { label, ms, problem: 'a cancelled call ran anyway' };
  return { label, ms };
}
