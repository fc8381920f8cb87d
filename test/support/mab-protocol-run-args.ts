// The argv of `eval run --protocol medagentbench` with a scripted model, as the protocol suites give it: only where the
// task module comes from, the model, its base URL, the log and any further options differ between them.
export interface MabProtocolRunOptions {
  /** The task file (--tasks). */
  tasks: string;
  /** Where the task module comes from: a benchmark checkout, or a module file with its functions file. */
  module: { benchmarkDir: string } | { promptFile: string; funcs: string };
  model: string;
  baseUrl: string;
  /** The eval log (--log); a run refused before it starts needs none. */
  log?: string;
  /** Further options, e.g. `--fhir-base-url`, `--concurrency`, `--grader`. */
  extra?: string[];
}

export function mabProtocolRunArgs(o: MabProtocolRunOptions): string[] {
  const module =
    'benchmarkDir' in o.module
      ? ['--benchmark-dir', o.module.benchmarkDir]
      : ['--prompt-file', o.module.promptFile, '--funcs', o.module.funcs];
  return [
    'run',
    '--tasks',
    o.tasks,
    '--protocol',
    'medagentbench',
    ...module,
    '--solver',
    'model',
    '--model',
    o.model,
    '--base-url',
    o.baseUrl,
    ...(o.extra ?? []),
    ...(o.log ? ['--log', o.log] : []),
    '--quiet',
  ];
}
