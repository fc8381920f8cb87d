// `eval ehr serve --tasks <file> [--port N]`: the EHR generated from a MedAgentBench task file, served on loopback at
// /fhir/ (no key, no rate limit) until SIGINT or SIGTERM, so another harness, the benchmark's own agent or refsol.py
// can use it; `eval run --fhir-base-url <printed URL>` runs against it.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { loadDataset } from '../load-dataset.ts';
import { generateMabEhr } from '../medagentbench/generate-ehr.ts';
import { serveEhr } from '../medagentbench/serve-ehr.ts';
import { EXIT, UsageError } from './run-command.ts';

const EhrServeArgsSchema = z.object({
  tasks: z.string({ error: 'eval ehr serve needs --tasks <medagentbench.json>' }).min(1),
  port: z.coerce.number().int().min(0).max(65535).default(0),
});

export async function ehrServeCommand(
  argv: string[],
  stdout: { write(s: string): unknown },
  signal?: AbortSignal,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'serve') throw new UsageError('usage: eval ehr serve --tasks <medagentbench.json> [--port N]');
  const { values } = parseArgs({ args: rest, options: { tasks: { type: 'string' }, port: { type: 'string' } } });
  const parsed = EhrServeArgsSchema.safeParse(values);
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => i.message).join('; '));
  const dataset = await loadDataset(parsed.data.tasks);
  if (!dataset.medagentbench) throw new UsageError(`${parsed.data.tasks}: not a MedAgentBench task file`);
  const tasks = dataset.medagentbench;
  const served = await serveEhr({ bundles: async () => generateMabEhr(tasks), port: parsed.data.port, toolsModule: env.TOOLS_MODULE });
  stdout.write(`FHIR base ${served.baseUrl} (${tasks.length} tasks' EHR; Ctrl-C stops)\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    if (signal) signal.addEventListener('abort', stop, { once: true });
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await served.close();
  return EXIT.ok;
}
