// `eval run`: dataset → filter/shard → solver → isolated environment → incremental log → summary + exit code.
import { mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { judgePanel, RunArgsSchema, type RunArgs } from '../cli-args.ts';
import { defaultScorers } from '../default-scorers.ts';
import { refsolPyGrader, type RefsolPyGrader } from '../medagentbench/refsol-py-grader.ts';
import { refsolPyUnavailable } from '../medagentbench/run-refsol-py.ts';
import { refsolScorer } from '../scorers/refsol-scorer.ts';
import { checkEndpoint, type EndpointProbe } from '../environment/check-endpoint.ts';
import { createEnvironment } from '../environment/create-environment.ts';
import { attemptOf, EvalLogWriter, LOG_SCHEMA_VERSION, readEvalLog, sampleKey, type HeaderRecord, type SampleRecord } from '../eval-log.ts';
import type { FailureCause } from '../failure-cause.ts';
import type { EhrIdentity } from '../provenance-schema.ts';
import { resumeMismatches } from '../resume-mismatches.ts';
import { bundlesSha256, externalEhrIdentity, runProvenance } from '../run-provenance.ts';
import { gitRevision } from '../git-revision.ts';
import { loadDataset, shardScenarios } from '../load-dataset.ts';
import { generateMabEhr } from '../medagentbench/generate-ehr.ts';
import { ProtocolRunError, setupProtocolRun, type ProtocolRun } from './protocol-run.ts';
import type { LoadedDataset } from '../load-dataset.ts';
import { causeOf, summarize } from '../metrics.ts';
import { baselineSummary } from '../baseline-summary.ts';
import { doNothingSolver } from '../solvers/do-nothing-solver.ts';
import { writeClosingLines } from './closing-lines.ts';
import { EvalProgressBar } from '../eval-progress-bar.ts';
import { plannedSamples, runEval } from '../run-eval.ts';
import { defineTask, type Solver } from '../task.ts';
import { modelSolver } from '../solvers/model-solver.ts';
import { referenceSolver } from '../solvers/reference-solver.ts';
import { replaySolver } from '../solvers/replay-solver.ts';
import { answerKeySolver } from '../solvers/answer-key-solver.ts';
import { checkGoldData } from '../fhir-agentbench/check-gold-data.ts';
import { judgeLabelOf, summarizeAgentBench } from '../fhir-agentbench/agentbench-summary.ts';
import { createMedplumFhirClient } from '../../src/fhir/client/medplum-fhir-client.ts';
import { loadSyntheticEhrBundles } from '../../fixtures/synthetic-ehr.ts';
import { readEhrBundles } from '../../src/fhir/loader/read-ehr-bundles.ts';
import { serverToolsFor } from '../../src/tools/index.ts';
import { loadConfig } from '../../src/composition/config.ts';
import type { ServerTools } from '../../src/agent/tool-contract.ts';
import { ToolsModuleError } from '../../src/composition/load-tools-module.ts';
import { gatewayToolCatalogue } from '../../src/composition/compose-gateway.ts';

export const BUILTIN_SUITE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'suites', 'builtin.jsonl');

export interface RunIo {
  stdout: { write(s: string): unknown };
  stderr: NodeJS.WriteStream | { isTTY?: boolean; write(s: string): boolean };
  env: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
  /** The command line after the program name, recorded (secrets redacted) in the log header. */
  argv?: readonly string[];
}

/** resumeRefused: `--resume` found a setting that differs from the log's (one line each on stderr; log untouched). */
export const EXIT = { ok: 0, harnessError: 2, belowMinPassRate: 3, resumeRefused: 4, usage: 64 } as const;

/** What `--retry-errors` runs again: the run's fault, not the model's answer. */
const RETRYABLE = new Set<FailureCause>(['upstream-error', 'timeout', 'harness-error', 'rate-limit']);

export async function runCommand(args: RunArgs, io: RunIo): Promise<number> {
  const source = args.target === 'builtin' ? BUILTIN_SUITE : args.target;
  const dataset = await loadDataset(source);
  let scenarios = dataset.scenarios;
  if (args.category) {
    const wanted = new Set(args.category.split(',').map((c) => c.trim()));
    scenarios = scenarios.filter((s) => wanted.has(s.category));
  }
  scenarios = shardScenarios(scenarios, args.shard);
  if (args.limit) scenarios = scenarios.slice(0, args.limit);

  // --protocol medagentbench: the benchmark's own protocol, prompt, FHIR base and grader (medagentbench/protocol-run.ts).
  const protocolRun = args.protocol === 'medagentbench' ? await startProtocolRun(args, dataset, io) : undefined;
  const solver = protocolRun
    ? protocolRun.solver
    : dataset.kind === 'fhir-agentbench' && !['model', 'replay', 'do-nothing'].includes(args.solver)
      ? answerKeySolver()
      : await makeSolver(args, io);
  const judges = judgePanel(args, { apiKey: args.apiKey, fetch: io.fetch, timeoutMs: args.timeout * 1000 });
  // --grader refsol.py: the user's own refsol.py beside the `refsol` score on every MedAgentBench sample.
  const refsolPy = args.grader === 'refsol.py' ? refsolPyFor(args.benchmarkDir!) : undefined;
  if (refsolPy instanceof Error) {
    io.stderr.write(`error: --grader refsol.py: ${refsolPy.message}\n`);
    await protocolRun?.close();
    return 2;
  }
  const refsol = refsolPy ? { refsolPy, ...(protocolRun ? { fhirBase: protocolRun.fhirBaseUrl } : {}) } : undefined;
  const task = defineTask({
    name: path.basename(source).replace(/\.(jsonl|json|ya?ml|csv)$/i, ''),
    dataset: scenarios,
    solver,
    scorers: protocolRun
      ? protocolRun.scorers.map((sc) => (refsol && sc.name === 'refsol' ? refsolScorer(refsol) : sc))
      : defaultScorers({ judges, refsol }),
  });

  const fhirBaseUrl = protocolRun?.fhirBaseUrl ?? args.fhirBaseUrl ?? io.env.FHIR_BASE_URL;
  const gateway = args.solver === 'model' && args.mode === 'gateway';
  // Gateway mode on the gateway's own /fhir (snapshots, cleanup): the key the chat requests carry, unless a header is named.
  const gatewayKey = gateway && !fhirBaseUrl ? (args.apiKey ?? io.env.UPSTREAM_API_KEY) : undefined;
  const fhirAuthHeader = args.fhirAuthHeader ?? io.env.FHIR_AUTH_HEADER ?? (gatewayKey ? `Bearer ${gatewayKey}` : undefined);
  const headers = fhirAuthHeader ? { authorization: fhirAuthHeader } : undefined;
  if (args.ehr && fhirBaseUrl) {
    throw new UsageError('--ehr seeds the embedded FHIR server; load an external one with fhir-agent-gateway load --fhir-base-url URL DIR');
  }
  await preflight(args, io, fhirBaseUrl, headers);
  let ehrSha256: string | null = null;
  // An external FHIR server: the one given, or the gateway's; none means the embedded store.
  const externalFhirUrl = fhirBaseUrl || (gateway && args.baseUrl ? new URL('/fhir', args.baseUrl).href : undefined);
  const created = await createEnvironment({
    fhirBaseUrl: externalFhirUrl,
    // The embedded store's gateway serves the deployment's tools too, as `serve` would.
    toolsModule: io.env.TOOLS_MODULE,
    headers,
    loadEhr: args.loadEhr,
    // --ehr: any folder of bundles or NDJSON (e.g. the MIMIC-IV demo) instead of the dataset's own EHR.
    bundles: async () => {
      const bundles = args.ehr
        ? await readEhrBundles(args.ehr)
        : dataset.medagentbench
          ? await generateMabEhr(dataset.medagentbench)
          : await loadSyntheticEhrBundles();
      ehrSha256 = bundlesSha256(bundles);
      return bundles;
    },
  }).catch(usageErrorOf);
  // The protocol run serves the task file's EHR itself when no FHIR base is given: that is generated data too.
  const servedByProtocol = protocolRun && !args.fhirBaseUrl && dataset.medagentbench;
  const ehr: EhrIdentity = servedByProtocol
    ? { kind: 'generated', sha256: bundlesSha256(await generateMabEhr(dataset.medagentbench!)), baseUrl: externalFhirUrl }
    : externalFhirUrl
      ? await externalEhrIdentity({ baseUrl: externalFhirUrl, headers, fetch: io.fetch, sha256: ehrSha256 })
      : { kind: args.ehr ? 'loaded' : dataset.medagentbench ? 'generated' : 'fixtures', sha256: ehrSha256 };
  const { environment } = created;
  // FHIR-AgentBench: questions whose gold resources are not on the server are "data missing", not failures.
  const dataCheck = dataset.fhirAgentBench
    ? await checkGoldData(
        createMedplumFhirClient(
          created.embedded
            ? { baseUrl: created.embedded.baseUrl, fetch: created.embedded.fetch }
            : { baseUrl: externalFhirUrl!, headers, fetch: io.fetch },
        ),
        dataset.fhirAgentBench.filter((q) => scenarios.some((s) => s.id === q.questionId)),
      )
    : undefined;
  if (dataCheck) {
    const present = new Set(dataCheck.present);
    scenarios = scenarios.filter((s) => present.has(s.id));
    task.dataset = scenarios;
  }

  const logPath = args.log ?? path.join('.eval-runs', `${new Date().toISOString().replace(/[:.]/g, '-')}-${task.name}.jsonl`);
  await mkdir(path.dirname(path.resolve(logPath)), { recursive: true });
  const header: HeaderRecord = {
    type: 'header',
    schemaVersion: LOG_SCHEMA_VERSION,
    runId: `${Date.now().toString(36)}-${process.pid}`,
    createdAt: new Date().toISOString(),
    git: await gitRevision(),
    task: task.name,
    dataset: { source, sha256: dataset.sha256, scenarios: dataset.scenarios.length, ungradable: dataset.ungradable ?? [] },
    solver: { name: solver.name, args: solver.args },
    scorers: task.scorers.map((s) => ({ name: s.name, args: s.args })),
    spec: {
      epochs: args.epochs,
      concurrency: args.concurrency,
      maxSteps: args.maxSteps,
      limit: args.limit ?? null,
      category: args.category ?? null,
      shard: args.shard ? `${args.shard.index}/${args.shard.count}` : null,
      isolation: environment.isolation,
      environment: environment.description,
      ...protocolRun?.spec,
      ...(dataCheck
        ? { dataCheck: { present: dataCheck.present.length, dataMissing: dataCheck.missing.length, missing: dataCheck.missing } }
        : {}),
    },
    provenance: runProvenance({
      argv: io.argv ?? process.argv.slice(2),
      // Every option by name, unset ones as null, so a reader sees what was not given as well as what was.
      options: Object.fromEntries(Object.keys(RunArgsSchema.shape).map((k) => [k, args[k as keyof RunArgs] ?? null])),
      seed: args.seed,
      protocol: protocolOf(args),
      sends: solver.sends,
      ehr,
    }),
  };
  const previous = args.resume && existsSync(logPath) ? await readEvalLog(logPath) : undefined;
  // Checked before the writer opens: a refused resume leaves the log byte-for-byte as it was.
  const refused = previous?.header ? resumeMismatches(previous.header, header) : [];
  if (refused.length) {
    for (const line of refused) io.stderr.write(`${line}\n`);
    await environment.close();
    return EXIT.resumeRefused;
  }
  const planned = new Set(plannedSamples(scenarios, args.epochs).map(({ scenario, epoch }) => sampleKey({ id: scenario.id, epoch })));
  const done = (previous?.samples ?? []).filter((s) => planned.has(sampleKey(s)));
  // --retry-errors: the latest attempt of a sample that failed by the run's fault is run again as the next attempt;
  // the earlier one stays in the log, and readers keep the latest.
  const retry = args.retryErrors ? done.filter((s) => RETRYABLE.has(causeOf(s) as FailureCause)) : [];
  const attempts = new Map(retry.map((s) => [sampleKey(s), attemptOf(s) + 1]));
  const prior = done.filter((s) => !attempts.has(sampleKey(s)));
  const skip = new Set(prior.map(sampleKey));
  const writer = await EvalLogWriter.open(logPath, { resume: Boolean(previous) });
  if (!previous?.header) await writer.append(header);
  else await writer.append({ type: 'resume', at: new Date().toISOString(), skipped: skip.size, retried: retry.length });

  const progress = args.quiet
    ? undefined
    : new EvalProgressBar({
        total: planned.size,
        alreadyDone: prior.length,
        alreadyPassed: prior.filter((s) => s.passed).length,
        stream: io.stderr,
      });
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let fresh: SampleRecord[] = [];
  try {
    fresh = await runEval({
      task,
      environment,
      concurrency: args.concurrency,
      epochs: args.epochs,
      maxSteps: args.maxSteps,
      snapshotWrites: gateway,
      clockPinned: !gateway,
      skip,
      attempts,
      signal: controller.signal,
      contextWindow: args.contextWindow,
      onSample: async (rec) => {
        await writer.append(rec);
        progress?.tick(rec);
      },
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    progress?.finish();
  }
  const all = [...prior, ...fresh];
  const summary = summarize(all);
  // The do-nothing floor: by default for both benchmarks' files.
  const floor =
    (args.baseline ?? (dataset.medagentbench || dataset.fhirAgentBench ? 'do-nothing' : 'none')) === 'do-nothing' &&
    args.solver !== 'do-nothing' &&
    !protocolRun &&
    !controller.signal.aborted
      ? await runEval({ task: { ...task, solver: doNothingSolver() }, environment, concurrency: args.concurrency, clockPinned: !gateway })
      : undefined;
  const agentBench = dataCheck ? summarizeAgentBench(all, dataCheck.missing, { judge: judgeLabelOf(task.scorers), floor }) : undefined;
  const baseline = floor
    ? { ...baselineSummary('do-nothing', summarize(floor)), ...(agentBench?.floor ? { fhirAgentBench: agentBench.floor } : {}) }
    : undefined;
  const interrupted = controller.signal.aborted || all.length < planned.size;
  await writer.append({
    type: 'footer',
    status: interrupted ? 'interrupted' : summary.overall.errors ? 'error' : 'success',
    finishedAt: new Date().toISOString(),
    summary: { ...summary, ...(agentBench ? { fhirAgentBench: agentBench } : {}), ...(baseline ? { baseline } : {}) } as unknown as Record<
      string,
      unknown
    >,
  });
  await writer.close();
  await refsolPy?.close();
  await protocolRun?.close();
  await environment.close();

  const pct = writeClosingLines(io.stdout, {
    logPath,
    summary,
    samples: all,
    ungradable: dataset.ungradable ?? [],
    agentBench,
    baseline,
    header,
  });
  if (interrupted) return EXIT.harnessError;
  if (summary.overall.errors) return EXIT.harnessError;
  if (args.minPassRate !== undefined && pct < args.minPassRate) return EXIT.belowMinPassRate;
  return EXIT.ok;
}

async function makeSolver(args: RunArgs, io: RunIo): Promise<Solver> {
  if (args.solver === 'reference') return referenceSolver();
  if (args.solver === 'do-nothing') return doNothingSolver();
  if (args.solver === 'answer-key') throw new UsageError('--solver answer-key needs a FHIR-AgentBench CSV');
  if (args.solver === 'replay') {
    if (!args.replay) throw new UsageError('--solver replay needs --replay <log.jsonl>');
    return replaySolver((await readEvalLog(args.replay)).samples);
  }
  const baseUrl = args.baseUrl ?? io.env.UPSTREAM_BASE_URL;
  const model = args.model ?? io.env.UPSTREAM_MODEL;
  if (!baseUrl || !model) throw new UsageError('--solver model needs --base-url and --model');
  return modelSolver({
    baseUrl,
    model,
    apiKey: args.apiKey ?? io.env.UPSTREAM_API_KEY,
    mode: args.mode,
    fetch: io.fetch,
    timeoutMs: args.timeout * 1000,
    retries: args.maxRetries,
    temperature: args.temperature,
    maxTokens: args.maxTokens,
    seed: args.seed,
    // The tools as the gateway serves them (TOOLS_MODULE's too), each result held to the same TOOL_RESULT_MAX_TOKENS.
    tools: args.mode === 'client-tools' ? await clientTools(io) : undefined,
  });
}

/** Issue 29: a deployment's own tools (TOOLS_MODULE) join the built-ins here as they do in the gateway. */
async function clientTools(io: RunIo): Promise<ServerTools> {
  const config = loadConfig({ TOOL_RESULT_MAX_TOKENS: io.env.TOOL_RESULT_MAX_TOKENS, TOOLS_MODULE: io.env.TOOLS_MODULE });
  const catalogue = await gatewayToolCatalogue({ config }).catch(usageErrorOf);
  return serverToolsFor({ resultMaxTokens: config.TOOL_RESULT_MAX_TOKENS, catalogue });
}

/** A TOOLS_MODULE that does not load (or clashes) is the user's to fix: one usage line naming it, as `serve` gives. */
function usageErrorOf(err: unknown): never {
  throw err instanceof ToolsModuleError ? new UsageError(err.message) : err;
}

/** Every endpoint the run will call answers (any HTTP status but 401/403), checked in parallel, in about 5 s at worst. */
async function preflight(args: RunArgs, io: RunIo, fhirBaseUrl: string | undefined, fhirHeaders?: Record<string, string>): Promise<void> {
  const bearer = (key: string | undefined) => (key ? { authorization: `Bearer ${key}` } : undefined);
  const probes: EndpointProbe[] = [];
  const baseUrl = args.baseUrl ?? io.env.UPSTREAM_BASE_URL;
  if (args.solver === 'model' && baseUrl)
    probes.push({ flag: '--base-url', baseUrl, path: 'models', headers: bearer(args.apiKey ?? io.env.UPSTREAM_API_KEY), fetch: io.fetch });
  const judgeUrls = judgePanel(args, {}).map((j) => j.baseUrl);
  for (const url of new Set(judgeUrls))
    probes.push({ flag: '--judge-base-url', baseUrl: url, path: 'models', headers: bearer(args.apiKey), fetch: io.fetch });
  if (fhirBaseUrl) probes.push({ flag: '--fhir-base-url', baseUrl: fhirBaseUrl, path: 'metadata', headers: fhirHeaders, fetch: io.fetch });
  await Promise.all(probes.map((p) => checkEndpoint(p)));
}

/** The agent protocol of the run: the project's tools unless a benchmark's own protocol was asked for. */
function protocolOf(args: RunArgs): string {
  const protocol = (args as { protocol?: unknown }).protocol;
  return typeof protocol === 'string' ? protocol : 'tools';
}

async function startProtocolRun(args: RunArgs, dataset: LoadedDataset, io: RunIo): Promise<ProtocolRun> {
  try {
    return await setupProtocolRun({ ...args, fhirBaseUrl: args.fhirBaseUrl ?? io.env.FHIR_BASE_URL }, dataset, {
      baseUrl: args.baseUrl ?? io.env.UPSTREAM_BASE_URL,
      model: args.model ?? io.env.UPSTREAM_MODEL,
      apiKey: args.apiKey ?? io.env.UPSTREAM_API_KEY,
      fetch: io.fetch,
      toolsModule: io.env.TOOLS_MODULE,
    });
  } catch (err) {
    if (err instanceof ProtocolRunError) throw new UsageError(err.message);
    return usageErrorOf(err);
  }
}

export class UsageError extends Error {}

/** The per-sample refsol.py grader, or why it cannot run here (no python3, no requests, no refsol.py). */
function refsolPyFor(dir: string): RefsolPyGrader | Error {
  const why = refsolPyUnavailable(dir);
  return why ? new Error(why) : refsolPyGrader({ dir });
}
