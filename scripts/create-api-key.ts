// npm run key -- --id alice --scopes "system/*.rs chat" [--patients S1000002,S1000003]
// Prints a new random API key (once) and the API_KEYS_FILE entry holding its SHA-256.
import { parseArgs } from 'node:util';
import { createApiKey } from '../src/policies/auth/create-api-key.ts';
import { KEY_FLAGS } from '../src/policies/auth/smart-scope.ts';

const USAGE = `Usage: fhir-agent-gateway key --id <id> --scopes "<scopes and flags>" [--patients <id,id>]   (in a checkout: npm run key -- …)
  --scopes   SMART v2 scopes and flags, space-separated, e.g. "system/*.rs chat", "system/Observation.cruds tools:write",
             "patient/*.rs chat" (then --patients is required). Flags: ${KEY_FLAGS.join(', ')}.
  --patients Patient ids a patient/ key may see, comma-separated.`;

function main(argv: string[]): number {
  let values: { id?: string; scopes?: string; patients?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { id: { type: 'string' }, scopes: { type: 'string' }, patients: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!values.id || !values.scopes) {
    process.stderr.write(`error: --id and --scopes are required\n${USAGE}\n`);
    return 2;
  }
  try {
    const patients = values.patients
      ?.split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    const { key, entry } = createApiKey({ id: values.id, scopes: values.scopes, patients });
    process.stdout.write(
      `API key for ${values.id} (shown once; only its SHA-256 is kept):\n\n  ${key}\n\nAdd to API_KEYS_FILE under "keys:":\n\n${entry}\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message.replace(/^keys\.0\./, '')}\n`);
    return 2;
  }
}

process.exitCode = main(process.argv.slice(2));
