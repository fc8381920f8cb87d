// FHIR_AUTH=smart-backend at boot: the signing key read, the token endpoint discovered, and a first token fetched,
// so a bad key, an unreachable or refusing authorisation server or an unknown client stops the start with one line
// naming the variable to fix (ConfigError: exit 78). What the server granted decides which tools are offered.
import type { FastifyBaseLogger } from 'fastify';
import { ConfigError, type Config } from '../config.ts';
import type { FhirClient } from '../fhir-client/fhir-client.ts';
import { createMedplumFhirClient } from '../fhir-client/medplum-fhir-client.ts';
import { createSmartBackendAuth, type SmartBackendAuth } from '../fhir-client/smart/create-smart-backend-auth.ts';
import { discoverTokenUrl } from '../fhir-client/smart/discover-token-url.ts';
import { FhirAuthError } from '../fhir-client/smart/fhir-auth.ts';
import { readPrivateKey } from '../fhir-client/smart/read-private-key.ts';

export interface SmartFhirClient {
  fhir: FhirClient;
  auth: SmartBackendAuth;
  /** The tools the granted scopes cover. */
  allowedTools: Set<string>;
}

/** Which variable an OAuth error points at. */
const VARIABLE_FOR: Record<string, string> = {
  invalid_client: 'FHIR_CLIENT_ID',
  unauthorized_client: 'FHIR_CLIENT_ID',
  invalid_scope: 'FHIR_SCOPES',
  invalid_grant: 'FHIR_PRIVATE_KEY_FILE',
};

export async function bootSmartFhirClient(
  config: Config,
  logger: FastifyBaseLogger,
  /** Which tools a grant covers (tools/: `toolsForScopes` over the registry). */
  toolsFor: (granted: readonly string[]) => { allowed: Set<string>; leftOut: Array<{ tool: string; reason: string }>; covered: number },
  io: { fetch?: typeof fetch; now?: () => number } = {},
): Promise<SmartFhirClient> {
  const baseUrl = config.FHIR_BASE_URL!;
  const key = await readPrivateKey(config.FHIR_PRIVATE_KEY_FILE!).catch((err: Error) => {
    throw new ConfigError(`invalid FHIR_PRIVATE_KEY_FILE=${JSON.stringify(config.FHIR_PRIVATE_KEY_FILE)}: ${err.message}`);
  });
  const tokenUrl =
    config.FHIR_TOKEN_URL ??
    (await discoverTokenUrl({ baseUrl, fetch: io.fetch ?? globalThis.fetch, timeoutMs: 10_000 }).catch((err: Error) => {
      throw new ConfigError(
        `invalid FHIR_BASE_URL: no SMART configuration (${err.message}); set FHIR_TOKEN_URL to name the token endpoint`,
      );
    }));
  const auth = createSmartBackendAuth({ tokenUrl, clientId: config.FHIR_CLIENT_ID!, key, scopes: config.FHIR_SCOPES!, ...io });
  try {
    await auth.authorization();
  } catch (err) {
    const code = err instanceof FhirAuthError ? err.oauthError : undefined;
    const variable = (code && VARIABLE_FOR[code]) ?? (config.FHIR_TOKEN_URL ? 'FHIR_TOKEN_URL' : 'FHIR_BASE_URL');
    throw new ConfigError(`invalid ${variable}: ${(err as Error).message}`);
  }
  const granted = auth.grantedScopes() ?? [];
  const { allowed, leftOut, covered } = toolsFor(granted);
  // read_resource and find_codes need no particular type; a grant covering no typed tool leaves them nothing to read.
  if (covered === 0)
    throw new ConfigError(`invalid FHIR_SCOPES: the server granted ${JSON.stringify(granted.join(' '))}, which covers no tool`);
  logger.info(
    { tokenUrl, clientId: config.FHIR_CLIENT_ID, alg: key.alg, kid: key.kid, granted },
    'FHIR server: SMART Backend Services token obtained',
  );
  for (const { tool, reason } of leftOut) logger.warn({ tool }, `tool not offered: ${reason}`);
  return { fhir: createMedplumFhirClient({ baseUrl, auth }), auth, allowedTools: allowed };
}
