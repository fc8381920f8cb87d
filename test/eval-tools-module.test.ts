// Issue 29: a deployment's own tools (TOOLS_MODULE) join the built-ins in the eval harness's client-tools mode as
// they do in the gateway: offered to the model and run by the harness. In-process runCommand, a real loopback
// OpenAI-compatible upstream that calls the added tool, the embedded FHIR server.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunArgsSchema } from '../evals/cli-args.ts';
import { EXIT, runCommand, UsageError } from '../evals/commands/run-command.ts';
import { createEnvironment } from '../evals/environment/create-environment.ts';
import { serveEhr } from '../evals/medagentbench/serve-ehr.ts';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.ts';
import { completionReply } from './support/upstream-replies.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let dir: string;
let fake: FakeUpstream;

const MODULE = `import { z } from 'zod';
export default () => [{
  name: 'bed_count',
  description: 'Beds free on a ward (a test tool).',
  inputSchema: z.object({ ward: z.string() }),
  write: false,
  execute: async ({ ward }) => ({ ok: true, content: { ward, free: 3 } }),
}];
`;

const sink = () => {
  let text = '';
  return { write: (s: string) => ((text += s), true), text: () => text };
};

async function run(env: Record<string, string>) {
  const args = RunArgsSchema.parse({
    solver: 'model',
    baseUrl: fake.baseUrl,
    model: 'm',
    limit: 1,
    baseline: 'none',
    quiet: true,
    out: path.join(dir, 'log.jsonl'),
  });
  const stderr = sink();
  const code = await runCommand(args, { stdout: sink(), stderr, env, argv: ['run'] });
  return { code, stderr: stderr.text() };
}

beforeAll(async () => {
  // Inside the checkout, so the module's `zod` resolves as it would in a deployment that installed the package.
  await mkdir(path.join(ROOT, 'node_modules/.cache'), { recursive: true });
  dir = await mkdtemp(path.join(ROOT, 'node_modules/.cache/eval-tools-module-'));
  await writeFile(path.join(dir, 'my-tools.mjs'), MODULE);
  await writeFile(path.join(dir, 'clash.mjs'), MODULE.replace("'bed_count'", "'find_patients'"));
  fake = await startFakeUpstream();
});
afterAll(async () => {
  await fake?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('TOOLS_MODULE in the eval harness (client-tools mode)', () => {
  it('offers the added tool to the model and runs it', async () => {
    fake.enqueue(
      completionReply({ toolCalls: [{ name: 'bed_count', arguments: '{"ward":"east"}' }] }),
      completionReply({ content: 'done' }),
    );
    fake.setHandler(() => completionReply({ content: 'done' }));
    const { code, stderr } = await run({ TOOLS_MODULE: path.join(dir, 'my-tools.mjs') });
    expect([EXIT.ok, EXIT.belowMinPassRate, EXIT.harnessError], stderr).toContain(code);
    const first = fake.requests.find((r) => r.path.endsWith('/chat/completions'))!;
    expect(first.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(
      expect.arrayContaining(['bed_count', 'find_patients']),
    );
    const toolMessage = fake.requests.flatMap((r) => r.body.messages ?? []).find((m: { role: string }) => m.role === 'tool');
    expect(JSON.parse(toolMessage.content)).toEqual({ ok: true, content: { ward: 'east', free: 3 } });
  });

  it('a clash is a usage error naming the module and the tool', async () => {
    const clash = path.join(dir, 'clash.mjs');
    const err = await run({ TOOLS_MODULE: clash }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toBe(`TOOLS_MODULE ${clash}: tool "find_patients" is already defined (a built-in tool)`);
  });
});

/** The names tools/list gives over POST /mcp (the JSON-RPC reply, as JSON or in one SSE event). */
async function mcpToolNames(baseUrl: string): Promise<string[]> {
  const res = await fetch(`${baseUrl}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  const text = await res.text();
  const json = text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)![1];
  return (JSON.parse(json) as { result: { tools: Array<{ name: string }> } }).result.tools.map((t) => t.name);
}

describe('TOOLS_MODULE in the gateways the evals start in process', () => {
  it("eval run's embedded store: its gateway serves the added tool beside the built-ins", async () => {
    const { environment, gateway } = await createEnvironment({ bundles: async () => [], toolsModule: path.join(dir, 'my-tools.mjs') });
    try {
      const address = await gateway!.app.listen({ port: 0, host: '127.0.0.1' });
      expect(await mcpToolNames(address)).toEqual(expect.arrayContaining(['bed_count', 'find_patients']));
    } finally {
      await environment.close();
    }
  });

  it('eval ehr serve and the MedAgentBench protocol run: the served gateway has it too', async () => {
    const served = await serveEhr({ bundles: async () => [], toolsModule: path.join(dir, 'my-tools.mjs') });
    try {
      expect(await mcpToolNames(served.baseUrl.replace(/\/fhir\/$/, ''))).toEqual(expect.arrayContaining(['bed_count', 'find_patients']));
    } finally {
      await served.close();
    }
  });

  it('a module that clashes stops eval run with the usage line, whatever the solver', async () => {
    const clash = path.join(dir, 'clash.mjs');
    const args = RunArgsSchema.parse({ solver: 'reference', limit: 1, baseline: 'none', quiet: true, out: path.join(dir, 'ref.jsonl') });
    const err = await runCommand(args, { stdout: sink(), stderr: sink(), env: { TOOLS_MODULE: clash }, argv: ['run'] }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toBe(`TOOLS_MODULE ${clash}: tool "find_patients" is already defined (a built-in tool)`);
  });
});
