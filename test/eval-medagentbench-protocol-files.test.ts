// The protocol's prompt and replies come from whatever task module the user points at (never from this repository):
// a stand-in module written here, with its own template and replies, drives a run; and bad input is a usage error.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeGateway } from '../src/composition/compose-gateway.ts';
import { loadConfig } from '../src/composition/config.ts';
import { readEvalLog } from '../evals/eval-log.ts';
import { mabSeedTasks } from '../evals/medagentbench/seed-tasks.ts';
import { mabProtocolRunArgs } from './support/mab-protocol-run-args.ts';
import { runEvalCli } from './support/run-eval-cli.ts';
import { startScriptedProtocolModel, type ScriptedProtocolModel } from './support/scripted-protocol-model.ts';

// A stand-in task module: the same Python constructs as the benchmark's (a triple-quoted template with str.format
// fields and doubled braces, f-string replies over get_res, the two POST replies in their except/else branches).
const MODULE = String.raw`
MedAgentBench_prompt = """Use {api_base} with {functions}.\nKeep {{braces}}.
Ctx: {context}
Q: {question}"""

class T:
    async def start_sample(self, index, session):
        if r.startswith('GET'):
            if "data" in get_res:
                session.inject({"role": "user", "content": f"DATA<{get_res['data']}>"})
            else:
                session.inject({"role": "user", "content": f"ERROR<{get_res['error']}>"})
        elif r.startswith('POST'):
            try:
                payload = json.loads('\n'.join(r.split('\n')[1:]))
            except Exception as e:
                session.inject({"role": "user", "content": "BAD POST"})
            else:
                session.inject({"role": "user", "content": "POST OK"})
`;

describe('--protocol medagentbench with a task module given by --prompt-file and --funcs', () => {
  let dir: string;
  let model: ScriptedProtocolModel;
  const tasks = mabSeedTasks().slice(1, 2);
  const runArgs = (modelName: string, baseUrl: string, log: string) =>
    mabProtocolRunArgs({
      tasks: path.join(dir, 'tasks.json'),
      module: { promptFile: path.join(dir, 'module.py'), funcs: path.join(dir, 'funcs.json') },
      model: modelName,
      baseUrl,
      log,
    });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'mab-files-'));
    writeFileSync(path.join(dir, 'module.py'), MODULE);
    writeFileSync(path.join(dir, 'funcs.json'), JSON.stringify([{ name: 'GET {api_base}/Patient', description: 'café' }]));
    writeFileSync(path.join(dir, 'tasks.json'), JSON.stringify(tasks));
    model = await startScriptedProtocolModel(
      (messages) => ['POST http://x/Observation\n{"a": 1}', 'POST http://x/Observation\n{bad', 'FINISH([1])'][messages.length >> 1],
    );
  });
  afterAll(async () => model?.close());

  it('fills the module template as str.format does and answers with the module replies', async () => {
    const log = path.join(dir, 'run.jsonl');
    const run = await runEvalCli(runArgs('scripted', model.baseUrl, log));
    expect(run.stderr).not.toMatch(/error/i);
    const [sample] = (await readEvalLog(log)).samples;
    const base = /^Use (\S+) with/.exec(sample.history![0].content)![1];
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/fhir\/$/);
    expect(sample.history![0].content).toBe(
      `Use ${base} with [{"name": "GET {api_base}/Patient", "description": "caf\\u00e9"}].\nKeep {braces}.\nCtx: ${tasks[0].context}\nQ: ${tasks[0].instruction}`,
    );
    expect(
      sample
        .history!.filter((m) => m.role === 'user')
        .slice(1)
        .map((m) => m.content),
    ).toEqual(['POST OK', 'BAD POST']);
    expect(sample).toMatchObject({ status: 'completed', result: '[1]', answer: [1] });
  }, 60_000);

  it('runs the same through the gateway (SERVER_TOOLS=false passes the text protocol through)', async () => {
    const gateway = await composeGateway({
      config: loadConfig({
        HOST: '127.0.0.1',
        PORT: '0',
        UPSTREAM_BASE_URL: model.baseUrl,
        UPSTREAM_MODEL: 'scripted',
        SERVER_TOOLS: 'false',
        LOG_LEVEL: 'silent',
        AUDIT_SINK: 'off',
        RATE_LIMIT_PER_MINUTE: '0',
      }),
      logger: pino({ level: 'silent' }),
    });
    try {
      const origin = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
      const log = path.join(dir, 'via-gateway.jsonl');
      const calls = model.calls.length;
      const run = await runEvalCli(runArgs('fhir-agent/clinical-reasoner', `${origin}/v1`, log));
      expect(run.stderr).not.toMatch(/error/i);
      const [sample] = (await readEvalLog(log)).samples;
      expect(model.calls.length - calls).toBe(3);
      expect(sample.history!.filter((m) => m.role === 'agent').map((m) => m.content)).toEqual([
        'POST http://x/Observation\n{"a": 1}',
        'POST http://x/Observation\n{bad',
        'FINISH([1])',
      ]);
      expect(sample).toMatchObject({ status: 'completed', result: '[1]' });
    } finally {
      await gateway.close();
    }
  }, 60_000);

  it('refuses a run it cannot make with a usage error naming what is missing', async () => {
    const common = ['--solver', 'model', '--model', 'm', '--base-url', 'http://127.0.0.1:9/v1', '--quiet'];
    const noDir = await runEvalCli(['run', '--tasks', path.join(dir, 'tasks.json'), '--protocol', 'medagentbench', ...common]);
    expect(noDir.code).toBe(64);
    expect(noDir.stderr).toMatch(/--benchmark-dir/);
    const missing = await runEvalCli(
      mabProtocolRunArgs({
        tasks: path.join(dir, 'tasks.json'),
        module: { benchmarkDir: path.join(dir, 'nope') },
        model: 'm',
        baseUrl: 'http://127.0.0.1:9/v1',
      }),
    );
    expect(missing.code).toBe(64);
    expect(missing.stderr).toMatch(/nope\/src\/server\/tasks\/medagentbench\/__init__\.py: not found/);
    const notMab = await runEvalCli([
      'run',
      'builtin',
      '--protocol',
      'medagentbench',
      '--prompt-file',
      path.join(dir, 'module.py'),
      '--funcs',
      path.join(dir, 'funcs.json'),
      ...common,
    ]);
    expect(notMab.code).toBe(64);
    expect(notMab.stderr).toMatch(/MedAgentBench task file/);
    writeFileSync(path.join(dir, 'bad-runs.jsonl'), '{"index": 0, "output": {"status": "completed", "history": []}}\n{"index": "x"}\n');
    const grade = await runEvalCli([
      'grade',
      '--tasks',
      path.join(dir, 'tasks.json'),
      '--results',
      path.join(dir, 'bad-runs.jsonl'),
      '--fhir-base-url',
      'http://127.0.0.1:9/fhir/',
      '--log',
      path.join(dir, 'g.jsonl'),
    ]);
    expect(grade.code).toBe(64);
    expect(grade.stderr).toMatch(/bad-runs\.jsonl:2: not an AgentBench result line/);
  }, 60_000);
});
