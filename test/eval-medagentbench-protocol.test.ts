// MedAgentBench's own protocol end to end over real HTTP: a scripted model on loopback, the task file's EHR served
// at /fhir/ behind a recording proxy (every FHIR request counted), the eval CLI as a user runs it, then the export
// graded by the benchmark's real refsol.py and compared with the harness's verdicts. The benchmark's files are never
// in the repository: they are read from ../shared/data/medagentbench and the suite skips with a reason without them.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvalLog, type EvalLog, type SampleRecord } from '../evals/eval-log.ts';
import { AgentBenchRunLineSchema } from '../evals/medagentbench/agentbench-output.ts';
import { formatPassRate } from '../evals/metrics.ts';
import { readBenchmarkReplies, type BenchmarkReplies } from '../evals/medagentbench/benchmark-replies.ts';
import { generateMabEhr } from '../evals/medagentbench/generate-ehr.ts';
import { refsolPyUnavailable, runRefsolPy } from '../evals/medagentbench/run-refsol-py.ts';
import { mabSeedTasks } from '../evals/medagentbench/seed-tasks.ts';
import { serveEhr, type ServedEhr } from '../evals/medagentbench/serve-ehr.ts';
import { layOutMabBenchmark, MAB_OFFICIAL as OFFICIAL, mabOfficialAbsent } from './support/mab-official-files.ts';
import { mabProtocolRunArgs } from './support/mab-protocol-run-args.ts';
import { startRecordingServer, type RecordingServer } from './support/recording-server.ts';
import { runEvalCli } from './support/run-eval-cli.ts';
import { startScriptedProtocolModel, type ProtocolMessage, type ScriptedProtocolModel } from './support/scripted-protocol-model.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const skipReason = mabOfficialAbsent();
if (skipReason) console.log(`skipping the MedAgentBench protocol suite: ${skipReason}`);
const pythonMissing = skipReason ?? refsolPyUnavailable(OFFICIAL);
if (!skipReason && pythonMissing) console.log(`skipping the refsol.py and Python-format checks: ${pythonMissing}`);

const tasks = mabSeedTasks();
const taskOf = (messages: ProtocolMessage[]) => tasks.find((t) => messages[0].content.endsWith(`Question: ${t.instruction}`))!;

describe.skipIf(skipReason)('eval run --protocol medagentbench (scripted model, real HTTP)', () => {
  let dir: string;
  let bench: string;
  let ehr: ServedEhr;
  let proxy: RecordingServer;
  let offBase: RecordingServer;
  let model: ScriptedProtocolModel;
  let base: string;
  let replies: BenchmarkReplies;
  let log: EvalLog;
  const byId = (id: string) => log.samples.find((s) => s.id === id)!;
  const agentTurns = (s: SampleRecord) => s.history!.filter((m) => m.role === 'agent').length;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'mab-protocol-'));
    bench = layOutMabBenchmark(dir);
    replies = readBenchmarkReplies(readFileSync(path.join(bench, 'src/server/tasks/medagentbench/__init__.py'), 'utf8'));
    writeFileSync(path.join(dir, 'tasks.json'), JSON.stringify(tasks));

    ehr = await serveEhr({ bundles: async () => generateMabEhr(tasks) });
    // The FHIR base the run is given: a proxy that records every request before passing it on.
    proxy = await startRecordingServer((req, res) => {
      void fetch(new URL(req.url!, ehr.baseUrl).href, { method: req.method }).then(async (r) => {
        res.writeHead(r.status, r.statusText, { 'content-type': r.headers.get('content-type') ?? 'text/plain' });
        res.end(Buffer.from(await r.arrayBuffer()));
      });
    });
    base = `${proxy.origin}/fhir/`;
    offBase = await startRecordingServer();
    model = await startScriptedProtocolModel((messages) => {
      const task = taskOf(messages);
      const turn = messages.filter((m) => m.role === 'assistant').length;
      const script: Record<string, Array<string | { status: number; body: string }>> = {
        // Fenced as Gemini writes it: the task module strips the fences.
        task1: [`\`\`\`tool_code\nGET ${base}Patient?identifier=${task.eval_MRN}\n\`\`\``, `FINISH(${JSON.stringify(task.sol)})`],
        task2: [`GET ${base}Patient?identifier=${task.eval_MRN}`, `POST ${base}Observation\n{not json`, 'FINISH([])'],
        task3: [`POST ${base}Observation\n{"resourceType": "Observation", "status": "final"}`, 'FINISH([])'],
        task4: [`GET http://127.0.0.1:${offBase.port}/fhir/Observation?patient=${task.eval_MRN}`, 'FINISH([])'],
        task5: [`GET ${base}Observation/does-not-exist?x=1`, 'FINISH([])'],
        task6: ['The average is 120 mg/dL.'],
        task7: Array.from({ length: 20 }, () => `GET ${base}Observation?patient=${task.eval_MRN}&code=GLU`),
        task8: [{ status: 400, body: JSON.stringify({ error: { message: "This model's maximum context length is 4096 tokens" } }) }],
        task9: ['  FINISH([])  '],
        task10: ['FINISH([1, 2'],
      };
      return script[task.id.split('_')[0]][turn];
    });
    const run = await runEvalCli(
      mabProtocolRunArgs({
        tasks: path.join(dir, 'tasks.json'),
        module: { benchmarkDir: bench },
        model: 'scripted',
        baseUrl: model.baseUrl,
        extra: ['--fhir-base-url', base, '--concurrency', '2'],
        log: path.join(dir, 'run.jsonl'),
      }),
    );
    expect(run.stderr).not.toMatch(/harness error/);
    log = await readEvalLog(path.join(dir, 'run.jsonl'));
  }, 120_000);

  afterAll(async () => {
    await model?.close();
    await offBase?.close();
    await proxy?.close();
    await ehr?.close();
  });

  it('records the protocol in the header and every sample in AgentBench history shape', () => {
    expect(log.header?.spec.protocol).toBe('medagentbench');
    expect(log.samples).toHaveLength(10);
    for (const s of log.samples) {
      expect(s.history![0].role).toBe('user');
      expect(Object.keys(s.scores)).toEqual(['refsol']);
      expect(s.passed).toBe(s.scores.refsol.value === 1);
    }
  });

  it('sends GETs with &_format=json and answers with the server response text', async () => {
    const s = byId('task1_1');
    expect(s.status).toBe('completed');
    expect(s.result).toBe(JSON.stringify(tasks[0].sol));
    expect(s.answer).toEqual(tasks[0].sol);
    // Its own request: with --concurrency 2, task2's GET of its own patient may come first.
    const sent = proxy.requests.find(
      (r) => r.url.startsWith('/fhir/Patient?') && new URL(r.url, 'http://x').searchParams.get('identifier') === tasks[0].eval_MRN,
    );
    expect(sent?.url).toBe(`/fhir/Patient?identifier=${tasks[0].eval_MRN}&_format=json`);
    const [prefix, suffix] = replies.getData('\u0000').split('\u0000');
    const reply = s.history![2].content;
    expect(reply.startsWith(prefix) && reply.endsWith(suffix)).toBe(true);
    const shown = JSON.parse(reply.slice(prefix.length, -suffix.length)) as {
      resourceType: string;
      entry: Array<{ resource: { id: string } }>;
    };
    const direct = (await (await fetch(`${ehr.baseUrl}Patient?identifier=${tasks[0].eval_MRN}&_format=json`)).json()) as typeof shown;
    expect(shown.resourceType).toBe('Bundle');
    expect(shown.entry.map((e) => e.resource)).toEqual(direct.entry.map((e) => e.resource));
  });

  it('never sends a POST: an accepted one and an invalid one are only answered', () => {
    expect(proxy.requests.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(byId('task3_1').history![2].content).toBe(replies.postAccepted);
    expect(byId('task3_1').status).toBe('completed');
    // The invalid POST is refused and the sample goes on to its FINISH, as in the task module.
    const s2 = byId('task2_1');
    expect(s2.history![4].content).toBe(replies.postInvalid);
    expect(s2.status).toBe('completed');
    expect(agentTurns(s2)).toBe(3);
  });

  it('does not send a GET off the FHIR base, answers it as a failed GET and logs it', () => {
    const s = byId('task4_1');
    expect(offBase.requests).toHaveLength(0);
    expect(offBase.connections()).toBe(0);
    expect(s.history![2].content.startsWith(replies.getError(''))).toBe(true);
    expect(s.toolTrace[0]).toMatchObject({ name: 'GET', ok: false });
    expect(s.toolTrace[0].error).toMatch(/^not sent: .*not under the FHIR base/);
  });

  it('answers an HTTP error as requests words it', () => {
    expect(byId('task5_1').history![2].content).toBe(
      replies.getError(`404 Client Error: Not Found for url: ${base}Observation/does-not-exist?x=1&_format=json`),
    );
  });

  it('ends on any other reply, at the round limit and on a context overflow with the benchmark statuses', () => {
    expect(byId('task6_1')).toMatchObject({ status: 'agent invalid action', passed: false });
    expect(byId('task6_1').history).toHaveLength(2);
    const s7 = byId('task7_1');
    expect(s7.status).toBe('task limit reached');
    expect(agentTurns(s7)).toBe(8);
    expect(s7.result).toBeUndefined();
    expect(byId('task8_1')).toMatchObject({ status: 'agent context limit', passed: false });
    expect(byId('task8_1').history).toHaveLength(1);
    expect(byId('task9_1')).toMatchObject({ status: 'completed', result: '[]', answer: [] });
    expect(byId('task10_1')).toMatchObject({ status: 'completed', result: '[1, ', answer: null });
  });

  it('exports AgentBench runs.jsonl that refsol.py grades as the harness did, and eval grade (--grader refsol.py) agrees', async () => {
    const out = path.join(dir, 'runs.jsonl');
    const exp = await runEvalCli(['export', path.join(dir, 'run.jsonl'), '--format', 'medagentbench', '--out', out]);
    expect(exp.code).toBe(0);
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => AgentBenchRunLineSchema.parse(JSON.parse(l)));
    expect(lines.map((l) => l.index)).toEqual(tasks.map((_, i) => i));
    for (const l of lines) {
      const s = byId(tasks[l.index].id);
      expect(l.output).toEqual({
        index: l.index,
        status: s.status,
        history: s.history,
        ...(s.result !== undefined ? { result: s.result } : {}),
      });
    }
    const graded = path.join(dir, 'graded.jsonl');
    const g = await runEvalCli([
      'grade',
      '--tasks',
      path.join(dir, 'tasks.json'),
      '--results',
      out,
      '--fhir-base-url',
      base,
      '--log',
      graded,
      // The user's own refsol.py grades every line too when python3 + requests can run it.
      ...(pythonMissing ? [] : ['--grader', 'refsol.py', '--benchmark-dir', bench]),
    ]);
    expect(g.code, g.stderr).toBe(0);
    const regraded = await readEvalLog(graded);
    expect(regraded.samples.map((s) => [s.id, s.passed])).toEqual(tasks.map((t) => [t.id, byId(t.id).passed]));
    if (pythonMissing) return;
    const passes = regraded.samples.filter((s) => s.passed).length;
    expect(g.stdout).toContain(`; refsol.py: ${formatPassRate({ passed: passes, samples: tasks.length })}, disagreements: 0\n`);
    for (const s of regraded.samples) {
      expect(s.scores.refsol.metadata, s.id).toMatchObject({ refsolPy: { passed: s.passed }, disagree: false });
      expect((s.scores.refsol.metadata!.refsolPy as { reason: string }).reason).not.toMatch(/^refsol\.py failed/);
    }
    const verdicts = await runRefsolPy({
      dir: OFFICIAL,
      fhirBase: base,
      cases: lines.map((l) => ({
        task: tasks[l.index],
        run: { history: l.output.history, result: typeof l.output.result === 'string' ? l.output.result : null },
      })),
    });
    expect(verdicts.map((v) => v.passed)).toEqual(lines.map((l) => byId(tasks[l.index].id).passed));
  }, 120_000);

  it.skipIf(pythonMissing)("sends the prompt Python's str.format makes from the official module, byte for byte", () => {
    const py = spawnSync('python3', [path.join(here, 'python/format_mab_prompt.py'), bench, base, path.join(dir, 'tasks.json')], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(py.status, py.stderr).toBe(0);
    const expected = JSON.parse(py.stdout) as string[];
    for (const [i, task] of tasks.entries()) {
      const first = model.calls.find((c) => c[0].content.endsWith(`Question: ${task.instruction}`));
      expect(first?.[0]).toEqual({ role: 'user', content: expected[i] });
    }
  });
});
