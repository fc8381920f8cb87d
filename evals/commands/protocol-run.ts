// What `eval run --protocol medagentbench` changes in a run: the benchmark's own protocol solver against the model,
// the benchmark's prompt read from the user's checkout, a FHIR base the model's GETs go to over HTTP (the given
// --fhir-base-url, e.g. the benchmark's Docker image or `eval ehr serve`; else the task file's EHR served on
// loopback for the run), and the `refsol` score (refsol.py's rules) deciding `passed`.
import type { RunArgs } from '../cli-args.ts';
import type { LoadedDataset } from '../load-dataset.ts';
import { refsolScorer } from '../scorers/refsol-scorer.ts';
import type { Scorer, Solver } from '../task.ts';
import { readBenchmarkPrompt } from '../medagentbench/benchmark-prompt.ts';
import { benchmarkProtocolSolver } from '../solvers/benchmark-protocol-solver.ts';
import { generateMabEhr } from '../medagentbench/generate-ehr.ts';
import { serveEhr } from '../medagentbench/serve-ehr.ts';
import { BenchmarkFileError } from '../medagentbench/python-string.ts';

export interface ProtocolRun {
  solver: Solver;
  scorers: Scorer[];
  /** The api_base: GETs go here, and refsol grades against it. */
  fhirBaseUrl: string;
  /** For the log header's spec. */
  spec: Record<string, unknown>;
  close(): Promise<void>;
}

export class ProtocolRunError extends Error {}

export async function setupProtocolRun(
  args: RunArgs,
  dataset: LoadedDataset,
  endpoint: { baseUrl?: string; model?: string; apiKey?: string; fetch?: typeof fetch; toolsModule?: string },
): Promise<ProtocolRun> {
  const tasks = dataset.medagentbench;
  if (!tasks) throw new ProtocolRunError('--protocol medagentbench runs a MedAgentBench task file (--tasks <file.json>)');
  if (args.solver !== 'model')
    throw new ProtocolRunError('--protocol medagentbench needs --solver model (a scripted model stands in for policies)');
  if (!endpoint.baseUrl || !endpoint.model) throw new ProtocolRunError('--solver model needs --base-url and --model');
  if (args.ehr)
    throw new ProtocolRunError("--protocol medagentbench serves the task file's EHR or uses --fhir-base-url; --ehr does not apply");
  let prompt;
  try {
    prompt = await readBenchmarkPrompt({ benchmarkDir: args.benchmarkDir, promptFile: args.promptFile, funcs: args.funcs });
  } catch (err) {
    if (err instanceof BenchmarkFileError) throw new ProtocolRunError(err.message);
    throw err;
  }
  // The benchmark's api_base ends in a slash (refsol concatenates resource names to it); keep the user's spelling
  // otherwise, as the benchmark does.
  const served = args.fhirBaseUrl
    ? undefined
    : await serveEhr({ bundles: async () => generateMabEhr(tasks), toolsModule: endpoint.toolsModule });
  const fhirBaseUrl = served?.baseUrl ?? (args.fhirBaseUrl!.endsWith('/') ? args.fhirBaseUrl! : `${args.fhirBaseUrl!}/`);
  const solver = benchmarkProtocolSolver({
    baseUrl: endpoint.baseUrl,
    model: endpoint.model,
    apiKey: endpoint.apiKey,
    fetch: endpoint.fetch,
    timeoutMs: args.timeout * 1000,
    retries: args.maxRetries,
    temperature: args.temperature,
    maxTokens: args.maxTokens,
    seed: args.seed,
    prompt,
    fhirBase: fhirBaseUrl,
  });
  return {
    solver,
    scorers: [refsolScorer({ fhirBase: fhirBaseUrl })],
    fhirBaseUrl,
    spec: {
      protocol: 'medagentbench',
      grader: 'refsol',
      fhirBase: fhirBaseUrl,
      fhirServer: served ? "the task file's EHR, served on loopback for this run" : 'given (--fhir-base-url)',
      benchmarkFiles: prompt.sources,
    },
    close: async () => {
      await served?.close();
    },
  };
}
