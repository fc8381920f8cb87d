// The model solver: any OpenAI-compatible endpoint, in one of two modes with the same log shape.
// - 'client-tools': the endpoint is a plain upstream; the harness runs the FHIR tools itself via executeTool.
// - 'gateway': the endpoint is our gateway; it runs the tools server-side and reports them in `fhir_agent`.
// Both modes offer a client-side `finish` tool for the answer; a FINISH([...]) text is accepted as well.
import type { ChatMessage, FunctionTool } from '../../src/openai/chat-request.ts';
import type { ToolContext, ToolResult } from '../../tools/tool.ts';
import type { ModelCallMetric, Solver, SolverOutput, ToolTraceEntry } from '../task.ts';
import { parseAnswerText, parseFinishArguments, type ParsedAnswer } from '../parse-answer.ts';
import { FINISH_TOOL, systemPrompt, userPrompt } from './agent-prompt.ts';
import { callChat, type ChatEndpoint } from './chat-call.ts';
import { metricsFromFhirAgent, toolTraceFromFhirAgent } from './gateway-trace.ts';

export interface ClientTools {
  definitions(opts: { writesEnabled: boolean }): FunctionTool[];
  execute(name: string, argumentsJson: string, ctx: ToolContext): Promise<ToolResult>;
}

export interface ModelSolverOptions extends ChatEndpoint {
  model: string;
  mode: 'client-tools' | 'gateway';
  /** Required in client-tools mode (tools/index.ts: openAiToolDefinitions + executeTool). */
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
  return {
    name: 'model',
    args: {
      model: opts.model,
      baseUrl: opts.baseUrl,
      mode: opts.mode,
      temperature: opts.temperature ?? 0,
      maxTokens: opts.maxTokens ?? 4096,
    },
    sends: { systemPrompt: systemPrompt(), tools: [...offered, FINISH_TOOL] },
    async solve({ scenario, fhir, now, maxSteps, signal, fhirRequests }) {
      const allowed = scenario.allowedTools ? new Set(scenario.allowedTools) : undefined;
      const tools = [...offered.filter((t) => !allowed || allowed.has(t.function.name)), FINISH_TOOL];
      const transcript: ChatMessage[] = [
        { role: 'system', content: systemPrompt() },
        { role: 'user', content: userPrompt(scenario) },
      ];
      const toolTrace: ToolTraceEntry[] = [];
      const modelCalls: ModelCallMetric[] = [];
      let parsed: ParsedAnswer = { answer: null, raw: null };
      let error: string | undefined;
      let answered = false;

      for (let step = 0; step < maxSteps; step++) {
        const res = await callChat(
          opts,
          {
            model: opts.model,
            messages: transcript,
            tools,
            temperature: opts.temperature ?? 0,
            max_tokens: opts.maxTokens ?? 4096,
            ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
            ...opts.extraBody,
          },
          signal,
        );
        const gatewayTrace = opts.mode === 'gateway' ? toolTraceFromFhirAgent(res.fhirAgent) : [];
        toolTrace.push(...gatewayTrace);
        modelCalls.push(...(opts.mode === 'gateway' ? metricsFromFhirAgent(res.fhirAgent, res.metric) : [res.metric]));
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
          if (call.function.name === 'finish') {
            parsed = parseFinishArguments(call.function.arguments);
            finished = true;
            transcript.push({ role: 'tool', tool_call_id: callId, content: '{"ok":true}' });
            continue;
          }
          const started = performance.now();
          const requestsBefore = fhirRequests?.().length ?? 0;
          const result: ToolResult =
            opts.mode === 'client-tools' && (!allowed || allowed.has(call.function.name))
              ? await opts.tools!.execute(call.function.name, call.function.arguments, { fhir, now, writesEnabled: true, callId, signal })
              : { ok: false, error: { code: 'unknown_tool', message: `tool ${call.function.name} is not available` } };
          toolTrace.push({
            name: call.function.name,
            arguments: call.function.arguments,
            ok: result.ok,
            error: result.ok ? undefined : `${result.error.code}: ${result.error.message}`,
            durationMs: Math.round(performance.now() - started),
            via: 'client',
            fhirRequests: fhirRequests?.().slice(requestsBefore),
            written: result.ok ? result.written?.map(({ resourceType, id }) => ({ resourceType, id })) : undefined,
          });
          transcript.push({
            role: 'tool',
            tool_call_id: callId,
            content: JSON.stringify(result.ok ? result.content : { error: result.error }),
          });
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
    },
  };
}
