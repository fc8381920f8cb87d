// Entry point of `npm run load`; see run-loader-cli.ts for the behaviour.
import { createMedplumFhirClient } from '../client/medplum-fhir-client.ts';
import { runLoaderCli } from './run-loader-cli.ts';

const code = await runLoaderCli(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  // Transactions of a whole Synthea patient can take a while on HAPI; retries are safe because every write is a PUT.
  // Prefer return=OperationOutcome: the server's answer per entry without echoing every resource back.
  createClient: (args) =>
    createMedplumFhirClient({
      baseUrl: args.baseUrl,
      headers: { Prefer: 'return=OperationOutcome', ...args.headers },
      timeoutMs: 300_000,
      retries: 2,
    }),
});
process.exitCode = code;
