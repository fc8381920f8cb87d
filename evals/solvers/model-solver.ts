// The model solver: any OpenAI-compatible endpoint, in one of two modes with the same log shape.
// - 'client-tools': the endpoint is a plain upstream; the harness runs the gateway's own agent loop over it
//   (client-tools-loop.ts), with the FHIR tools as that loop's server tools.
// - 'gateway': the endpoint is our gateway; it runs the tools server-side and reports them in `fhir_agent`.
// Both modes offer a client-side `finish` tool for the answer; a FINISH([...]) text is accepted as well.
import type { ChatMessage } from '../../src/vocabulary/openai/chat-request.ts';
import type { ServerTools } from '../../src/agent/tool-contract.ts';
import type { ModelCallMetric, Solver, SolverOutput, ToolTraceEntry } from '../task.ts';
import { parseAnswerText, parseFinishArguments, type ParsedAnswer } from '../parse-answer.ts';
import { FINISH_TOOL, systemPrompt, userPrompt } from './agent-prompt.ts';
import { callChat, type ChatEndpoint } from './chat-call.ts';
import { runClientToolsLoop } from './client-tools-loop.ts';
import { metricsFromFhirAgent, toolTraceFromFhirAgent } from './gateway-trace.ts';

/** The tools the harness runs in client-tools mode: the gateway's served tools (serverToolsFor) or a stand-in. */
export type ClientTools = ServerTools;

export interface ModelSolverOptions extends ChatEndpoint {
  model: string;
  mode: 'client-tools' | 'gateway';
  /** Required in client-tools mode (src/tools/index.ts: openAiToolDefinitions + executeTool). */
  tools?: ClientTools;
  temperature?: number;
  maxTokens?: number;
  /** Sent as `seed` when set (servers that honour it sample reproducibly). */
  seed?: number;
  /** Extra request fields (e.g. `thinking`). */
  extraBody?: Record<string, unknown>;
}

export function modelSolver(opts: ModelSolverOptions): Solver {
  if (opts.mode === 'client-tools' && !opts.tools) throw new Error('client-tools mode needs the tool set');
  const offered = opts.mode === 'client-tools' ? opts.tools!.definitions({ writesEnabled: true }) : [];
  const fixed = () => ({
    model: opts.model,
    temperature: opts.temperature ?? 0,
    ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
    ...opts.extraBody,
  });
  return {
    name: 'model',
    args: {
      model: opts.model,
      baseUrl: opts.baseUrl,
      mode: opts.mode,
      temperature: opts.temperature ?? 0,
      maxTokens: opts.maxTokens ?? 4096,
    },
    // In the order the loop sends them: the client's own (finish) first, as mergeTools does.
    sends: { systemPrompt: systemPrompt(), tools: [FINISH_TOOL, ...offered] },
    async solve({ scenario, fhir, now, maxSteps, signal }) {
      const messages: ChatMessage[] = [
        { role: 'system', content: systemPrompt() },
        { role: 'user', content: userPrompt(scenario) },
      ];
      if (opts.mode === 'gateway') return solveThroughGateway(opts, fixed(), messages, maxSteps, signal);
      const allowed = scenario.allowedTools ? new Set(scenario.allowedTools) : undefined;
      const run = await runClientToolsLoop({
        endpoint: opts,
        body: fixed(),
        maxTokens: opts.maxTokens ?? 4096,
        messages,
        tools: opts.tools!,
        offered: offered.filter((t) => !allowed || allowed.has(t.function.name)),
        clientTools: [FINISH_TOOL],
        fhir,
        now,
        maxSteps,
        signal,
      });
      const { completion, trace } = run;
      const finish = completion.toolCalls.find((c) => c.function.name === FINISH_TOOL.function.name);
      const transcript: ChatMessage[] = [
        ...run.messages,
        {
          role: 'assistant',
          content: completion.content,
          ...(completion.reasoning ? { reasoning_content: completion.reasoning } : {}),
          ...(completion.toolCalls.length ? { tool_calls: completion.toolCalls } : {}),
        },
      ];
      const answered = !run.error && (finish !== undefined || trace.stop_reason === 'final' || trace.stop_reason === 'token_budget');
      const parsed: ParsedAnswer = run.error
        ? { answer: null, raw: null }
        : finish
          ? parseFinishArguments(finish.function.arguments)
          : answered
            ? parseAnswerText(completion.content)
            : { answer: null, raw: null };
      const toolTrace = toolTraceFromFhirAgent(trace).map((t): ToolTraceEntry => ({
        ...t,
        via: 'client',
        written: t.written?.map(({ resourceType, id }) => ({ resourceType, id })),
      }));
      const output: SolverOutput = { answer: parsed.answer, rawAnswer: parsed.raw, transcript, toolTrace, modelCalls: run.modelCalls };
      if (run.error) output.error = run.error;
      else if (!answered) output.stepLimit = true;
      return output;
    },
  };
}

/** Gateway mode: the gateway runs the FHIR tools; the harness answers only its own `finish` calls. */
async function solveThroughGateway(
  opts: ModelSolverOptions,
  fixed: Record<string, unknown>,
  transcript: ChatMessage[],
  maxSteps: number,
  signal: AbortSignal | undefined,
): Promise<SolverOutput> {
  const toolTrace: ToolTraceEntry[] = [];
  const modelCalls: ModelCallMetric[] = [];
  let parsed: ParsedAnswer = { answer: null, raw: null };
  let error: string | undefined;
  let answered = false;
  for (let step = 0; step < maxSteps; step++) {
    const res = await callChat(opts, { ...fixed, messages: transcript, tools: [FINISH_TOOL], max_tokens: opts.maxTokens ?? 4096 }, signal);
    toolTrace.push(...toolTraceFromFhirAgent(res.fhirAgent));
    modelCalls.push(...metricsFromFhirAgent(res.fhirAgent, res.metric));
    if (res.metric.error) {
      error = res.metric.error;
      break;
    }
    const toolCalls = res.message.tool_calls ?? [];
    transcript.push({
      role: 'assistant',
      content: res.message.content ?? null,
      ...((res.message.reasoning_content ?? res.message.reasoning)
        ? { reasoning_content: res.message.reasoning_content ?? res.message.reasoning }
        : {}),
      ...(toolCalls.length ? { tool_calls: toolCalls.map((c, i) => ({ ...c, id: c.id || `call_${step}_${i}` })) } : {}),
    });
    if (!toolCalls.length) {
      parsed = parseAnswerText(res.message.content);
      answered = true;
      break;
    }
    let finished = false;
    for (const [i, call] of toolCalls.entries()) {
      const callId = call.id || `call_${step}_${i}`;
      if (call.function.name === FINISH_TOOL.function.name) {
        parsed = parseFinishArguments(call.function.arguments);
        finished = true;
        transcript.push({ role: 'tool', tool_call_id: callId, content: '{"ok":true}' });
        continue;
      }
      // The gateway answers every call but the client's own; anything else here is a tool it does not have.
      const result = { ok: false, error: { code: 'unknown_tool', message: `tool ${call.function.name} is not available` } };
      toolTrace.push({
        name: call.function.name,
        arguments: call.function.arguments,
        ok: false,
        error: `unknown_tool: ${result.error.message}`,
        via: 'client',
      });
      transcript.push({ role: 'tool', tool_call_id: callId, content: JSON.stringify(result) });
    }
    if (finished) {
      answered = true;
      break;
    }
  }
  const output: SolverOutput = { answer: parsed.answer, rawAnswer: parsed.raw, transcript, toolTrace, modelCalls };
  if (error) output.error = error;
  else if (!answered) output.stepLimit = true;
  return output;
}
