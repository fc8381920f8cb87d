// MedAgentBench's own agent protocol, run by the harness against any OpenAI-compatible endpoint (a model, or the
// gateway): the benchmark's prompt as the one first user turn, then per round one model reply read as the task
// module reads it (strip, the ```tool_code/``` fences removed): `GET url` is sent with `&_format=json` appended and
// the response text goes back; `POST url` + JSON is never sent, only acknowledged (or refused when the JSON does not
// load); `FINISH(...)` ends the sample with the text inside; anything else ends it as an invalid action; the round
// limit ends it as "task limit reached". The session is kept in AgentBench's history shape ('agent' is sent as
// 'assistant'). Differences from the benchmark, by design: GETs off the FHIR base are not sent (answered as a failed
// GET and logged), and a model call that fails for another reason than the context is a harness error as well as
// the benchmark's "task error".
import { hitContext } from '../failure-cause.ts';
import { callChat, type ChatEndpoint } from './chat-call.ts';
import type { ModelCallMetric, Solver, SolverOutput, ToolTraceEntry } from '../task.ts';
import type { AgentBenchMessage, SampleStatus } from '../medagentbench/agentbench-output.ts';
import { formatBenchmarkPrompt, type BenchmarkPrompt } from '../medagentbench/benchmark-prompt.ts';
import { sendBenchmarkGet } from '../medagentbench/send-benchmark-get.ts';
import { pythonJsonLoads } from '../medagentbench/python-json.ts';
import type { MedAgentBenchTask } from '../medagentbench/task-file.ts';

export interface BenchmarkProtocolSolverOptions extends ChatEndpoint {
  model: string;
  prompt: BenchmarkPrompt;
  /** The api_base the prompt names and GETs go to (the benchmark's default is http://localhost:8080/fhir/). */
  fhirBase: string;
  /** Fetch for the FHIR server (default: global fetch). */
  fhirFetch?: typeof fetch;
  temperature?: number;
  maxTokens?: number;
  /** Sent as `seed` when set. */
  seed?: number;
}

/** AgentBench's history as chat messages: its 'agent' turns are the model's, sent as 'assistant'. */
const asChat = (history: AgentBenchMessage[]) =>
  history.map((m) => ({ role: m.role === 'agent' ? ('assistant' as const) : ('user' as const), content: m.content }));

/** The task module's reading of one reply (its strip and fence removal). */
function readAgentReply(content: string): string {
  return content.trim().replaceAll('```tool_code', '').replaceAll('```', '').trim();
}

export function benchmarkProtocolSolver(opts: BenchmarkProtocolSolverOptions): Solver {
  return {
    name: 'medagentbench-protocol',
    args: {
      model: opts.model,
      baseUrl: opts.baseUrl,
      fhirBase: opts.fhirBase,
      temperature: opts.temperature ?? 0,
      maxTokens: opts.maxTokens ?? 4096,
      ...opts.prompt.sources,
    },
    // Provenance: the benchmark's template stands for the system prompt, its function list for the tools.
    sends: { systemPrompt: opts.prompt.template, tools: JSON.parse(opts.prompt.functionsJson) as unknown[] },
    async solve({ scenario, maxSteps, signal }) {
      const task = scenario.metadata.medagentbench as MedAgentBenchTask;
      const history: AgentBenchMessage[] = [
        {
          role: 'user',
          content: formatBenchmarkPrompt(opts.prompt, { apiBase: opts.fhirBase, context: task.context, question: task.instruction }),
        },
      ];
      const modelCalls: ModelCallMetric[] = [];
      const toolTrace: ToolTraceEntry[] = [];
      const finish = (status: SampleStatus, extra: { result?: unknown; error?: string; raw?: string } = {}): SolverOutput => ({
        answer: status === 'completed' ? listOrNull(extra.result as string) : null,
        rawAnswer: extra.raw ?? null,
        transcript: asChat(history),
        toolTrace,
        modelCalls,
        agentBench: { history, status, ...(extra.result !== undefined ? { result: extra.result } : {}) },
        ...(extra.error ? { error: extra.error } : {}),
      });

      for (let round = 0; round < maxSteps; round++) {
        const res = await callChat(
          opts,
          {
            model: opts.model,
            messages: asChat(history),
            temperature: opts.temperature ?? 0,
            max_tokens: opts.maxTokens ?? 4096,
            ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
          },
          signal,
        );
        modelCalls.push(res.metric);
        if (signal?.aborted) throw new Error('aborted');
        if (res.metric.error) {
          if (hitContext([res.metric])) return finish('agent context limit');
          return finish('task error', { result: { error: res.metric.error }, error: res.metric.error });
        }
        const content = res.message.content ?? '';
        history.push({ role: 'agent', content });
        const r = readAgentReply(content);
        if (r.startsWith('GET')) {
          const url = `${r.slice(3).trim()}&_format=json`;
          const started = performance.now();
          const got = await sendBenchmarkGet(url, { fhirBase: opts.fhirBase, fetch: opts.fhirFetch, signal });
          toolTrace.push({
            name: 'GET',
            arguments: url,
            ok: 'data' in got,
            ...('error' in got ? { error: got.refused ? `not sent: ${got.error}` : got.error } : {}),
            durationMs: Math.round(performance.now() - started),
            via: 'client',
          });
          history.push({
            role: 'user',
            content: 'data' in got ? opts.prompt.replies.getData(got.data) : opts.prompt.replies.getError(got.error),
          });
        } else if (r.startsWith('POST')) {
          const valid = pythonJsonLoads(r.split('\n').slice(1).join('\n'));
          toolTrace.push({
            name: 'POST',
            arguments: r.slice(4).trim(),
            ok: valid,
            ...(valid ? {} : { error: 'payload is not JSON' }),
            via: 'client',
          });
          history.push({ role: 'user', content: valid ? opts.prompt.replies.postAccepted : opts.prompt.replies.postInvalid });
        } else if (r.startsWith('FINISH(')) {
          return finish('completed', { result: r.slice('FINISH('.length, -1), raw: content });
        } else {
          return finish('agent invalid action', { raw: content });
        }
      }
      return finish('task limit reached');
    },
  };
}

/** The FINISH list when the text inside parses as a JSON list, else null (refsol.py reads it with json.loads). */
function listOrNull(result: string): unknown[] | null {
  try {
    const v: unknown = JSON.parse(result);
    return Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}
