// The loader CLI, as a function of argv and injected streams so it can be tested without a process.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { FhirClient } from '../client/fhir-client.ts';
import { createProgressBar, type ProgressStream } from '../../shared/progress-bar.ts';
import { formatFileSummary, formatLoadProgress, loadFraction } from './format-load-progress.ts';
import { loadFhirFiles } from './load-fhir-files.ts';
import { checkServer } from './check-server.ts';
import { waitForServer } from './wait-for-server.ts';

const DEFAULT_FHIR_BASE_URL = 'http://127.0.0.1:8080/fhir';
const MAX_ERRORS_PRINTED = 50;

const USAGE = `Load FHIR R4 data into a FHIR server (the embedded one, HAPI, or any other).

Usage: fhir-agent-gateway load [options] <files or directories...>   (in a checkout: npm run load -- …)

Inputs: Bundle JSON (transaction, batch, collection; .json or .json.gz), bulk-data NDJSON
(.ndjson, .ndjson.gz, .jsonl), and directories (searched recursively). Synthea output loads as is:
hospitalInformation* and practitionerInformation* bundles go first, urn:uuid and conditional
references are resolved, and ids are deterministic, so loading twice creates no duplicates.
NDJSON (e.g. MIMIC-IV on FHIR) is read whole and ordered by its references, whatever the file
names: each resource after what it references, reference cycles inside transactions (a cycle
is never split across requests), so servers that check references (HAPI) accept it. A summary per file follows the load.

Options:
  --fhir-base-url URL   FHIR base URL (default: $FHIR_BASE_URL, else ${DEFAULT_FHIR_BASE_URL})
  --header 'Name: v'    Extra request header, repeatable (default: $FHIR_AUTH_HEADER, if set)
  --concurrency N       Requests in flight at once (default 4)
  --chunk-size N        NDJSON resources per request (default 500)
  --wait SECONDS        First wait up to SECONDS for [base]/metadata to answer (default 0)

Before loading, the server is checked: it must answer [base]/metadata and accept writes from this
caller (a PUT it refuses as invalid, so nothing is written). The gateway's own FHIR server takes
writes only when started with FHIR_WRITE_TOOLS=true (or with a key that has write scopes).
  --no-progress         No progress output
  -h, --help            Show this help

Exit code: 0 when everything loaded, 1 when any entry failed, 2 on bad usage.`;

const ArgsSchema = z.object({
  baseUrl: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()),
  concurrency: z.coerce.number().int().min(1).max(64),
  chunkSize: z.coerce.number().int().min(1).max(10_000),
  waitSeconds: z.coerce.number().int().min(0).max(3600),
  progress: z.boolean(),
  files: z.array(z.string()).min(1, 'give at least one file or directory'),
});
export type LoaderArgs = z.infer<typeof ArgsSchema>;

/** `Name: value`; a bare value is taken as an Authorization header (the FHIR_AUTH_HEADER convention). */
export function parseHeader(text: string): [string, string] {
  const match = /^([A-Za-z0-9!#$%&'*+.^_`|~-]+):\s*(.*)$/.exec(text.trim());
  return match ? [match[1], match[2]] : ['Authorization', text.trim()];
}

export function parseLoaderArgs(argv: string[], env: Record<string, string | undefined>): LoaderArgs | { help: true } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'fhir-base-url': { type: 'string' },
      header: { type: 'string', multiple: true },
      concurrency: { type: 'string', default: '4' },
      'chunk-size': { type: 'string', default: '500' },
      wait: { type: 'string', default: '0' },
      'no-progress': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return { help: true };
  const headerLines = values.header ?? (env.FHIR_AUTH_HEADER ? [env.FHIR_AUTH_HEADER] : []);
  return ArgsSchema.parse({
    baseUrl: (values['fhir-base-url'] ?? env.FHIR_BASE_URL ?? DEFAULT_FHIR_BASE_URL).replace(/\/+$/, ''),
    headers: Object.fromEntries(headerLines.map(parseHeader)),
    concurrency: values.concurrency,
    chunkSize: values['chunk-size'],
    waitSeconds: values.wait,
    progress: !values['no-progress'],
    files: positionals,
  });
}

export interface LoaderCliDeps {
  env: Record<string, string | undefined>;
  stdout: ProgressStream;
  stderr: ProgressStream;
  createClient: (args: LoaderArgs) => FhirClient;
  fetch?: typeof fetch;
}

export async function runLoaderCli(argv: string[], deps: LoaderCliDeps): Promise<number> {
  let args: LoaderArgs | { help: true };
  try {
    args = parseLoaderArgs(argv, deps.env);
  } catch (error) {
    const message = error instanceof z.ZodError ? z.prettifyError(error) : (error as Error).message;
    deps.stderr.write(`error: ${message}\n\n${USAGE}\n`);
    return 2;
  }
  if ('help' in args) {
    deps.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (args.waitSeconds > 0) {
    try {
      await waitForServer({
        baseUrl: args.baseUrl,
        headers: args.headers,
        timeoutMs: args.waitSeconds * 1000,
        fetch: deps.fetch,
        onWaiting: (reason) => deps.stderr.write(`waiting for ${args.baseUrl}/metadata (${reason})\n`),
      });
    } catch (error) {
      deps.stderr.write(`error: ${(error as Error).message}\n`);
      return 1;
    }
  }
  // One line when nothing answers or writes are refused, rather than one error per resource.
  const refused = await checkServer({ baseUrl: args.baseUrl, headers: args.headers, fetch: deps.fetch });
  if (refused) {
    deps.stderr.write(`error: ${refused}\n`);
    return 1;
  }
  const client = deps.createClient(args);
  const bar = args.progress ? createProgressBar({ stream: deps.stderr, render: formatLoadProgress, fraction: loadFraction }) : undefined;
  const started = performance.now();
  const report = await loadFhirFiles({
    client,
    files: args.files,
    concurrency: args.concurrency,
    chunkSize: args.chunkSize,
    onProgress: bar && ((p) => bar.update(p)),
    onPlan: (p) =>
      args.progress &&
      deps.stderr.write(`planned ${p.resources} NDJSON resources in ${p.levels} level(s) of references, ${p.cycles} cycle(s)\n`),
  });
  bar?.done();
  for (const f of report.perFile ?? []) deps.stdout.write(`${formatFileSummary(f)}\n`);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  deps.stdout.write(
    `Loaded ${report.files} file(s) into ${args.baseUrl} in ${seconds}s: ${report.entries} entries, ` +
      `${report.created} created, ${report.updated} updated, ${report.unchanged ?? 0} unchanged, ` +
      `${report.errors.length} error(s).\n`,
  );
  for (const e of report.errors.slice(0, MAX_ERRORS_PRINTED)) {
    const where = e.entryIndex < 0 ? e.file : `${e.file} entry ${e.entryIndex}`;
    deps.stderr.write(`error: ${where}: ${e.message}\n`);
  }
  if (report.errors.length > MAX_ERRORS_PRINTED) {
    deps.stderr.write(`... and ${report.errors.length - MAX_ERRORS_PRINTED} more error(s)\n`);
  }
  return report.errors.length ? 1 : 0;
}
