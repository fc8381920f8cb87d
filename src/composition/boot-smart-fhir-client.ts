// FHIR_AUTH=smart-backend at boot: the signing key read, the token endpoint discovered, and a first token fetched,
// so a bad key, a refusing or unreachable authorisation server or an unknown client stops the start with one line
// naming the variable to fix (ConfigError: exit 78). What the server granted decides which tools are offered.
// A server that does not answer at all is no reason to hang: after BOOT_WAIT_MS the gateway starts with the tools
// FHIR_SCOPES asks for, the discovery and the token request go on, and GET /ready says what is still missing.
import type { FastifyBaseLogger } from 'fastify';
import { ConfigError, type Config } from './config.ts';
import type { FhirClient } from '../fhir/client/fhir-client.ts';
import { createMedplumFhirClient } from '../fhir/client/medplum-fhir-client.ts';
import { createSmartBackendAuth, type SmartBackendAuth } from '../fhir/client/smart/create-smart-backend-auth.ts';
import { discoverTokenUrl } from '../fhir/client/smart/discover-token-url.ts';
import { FhirAuthError, type FhirAuth } from '../fhir/client/smart/fhir-auth.ts';
import { readPrivateKey } from '../fhir/client/smart/read-private-key.ts';
import { untilAborted } from '../shared/until-aborted.ts';
import { urlForDisplay } from '../shared/url-for-display.ts';

export interface SmartFhirClient {
  fhir: FhirClient;
  /** `tokenUrl`: undefined while the discovery document has not answered. */
  auth: FhirAuth & { readonly tokenUrl: string | undefined };
  /** The tools the granted scopes cover (the asked-for scopes while no token came). */
  allowedTools: Set<string>;
}

/** Which variable an OAuth error points at. */
const VARIABLE_FOR: Record<string, string> = {
  invalid_client: 'FHIR_CLIENT_ID',
  unauthorized_client: 'FHIR_CLIENT_ID',
  invalid_scope: 'FHIR_SCOPES',
  invalid_grant: 'FHIR_PRIVATE_KEY_FILE',
};

/** How long boot waits for the discovery document and the first token together, so the gateway listens within 5 s. */
export const BOOT_WAIT_MS = 2000;

type Settled<T> = { value: T } | { error: unknown } | 'pending';

/** What `p` came to within `ms`; `p` goes on either way (its failure is caught here, not left unhandled). */
async function within<T>(p: Promise<T>, ms: number): Promise<Settled<T>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), Math.max(1, ms))));
  try {
    return await Promise.race([
      p.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export async function bootSmartFhirClient(
  config: Config,
  logger: FastifyBaseLogger,
  /** Which tools a grant covers (src/tools/: `toolsForScopes` over the registry). */
  toolsFor: (granted: readonly string[]) => { allowed: Set<string>; leftOut: Array<{ tool: string; reason: string }>; covered: number },
  io: { fetch?: typeof fetch; now?: () => number; waitMs?: number } = {},
): Promise<SmartFhirClient> {
  const baseUrl = config.FHIR_BASE_URL!;
  const deadline = Date.now() + (io.waitMs ?? BOOT_WAIT_MS);
  const left = () => deadline - Date.now();
  const key = await readPrivateKey(config.FHIR_PRIVATE_KEY_FILE!).catch((err: Error) => {
    throw new ConfigError(`invalid FHIR_PRIVATE_KEY_FILE=${JSON.stringify(config.FHIR_PRIVATE_KEY_FILE)}: ${err.message}`);
  });
  const authFor = (tokenUrl: string): SmartBackendAuth =>
    createSmartBackendAuth({ tokenUrl, clientId: config.FHIR_CLIENT_ID!, key, scopes: config.FHIR_SCOPES!, fetch: io.fetch, now: io.now });
  const discover = () => discoverTokenUrl({ baseUrl, fetch: io.fetch ?? globalThis.fetch, timeoutMs: 10_000 });
  const noDiscovery = (err: unknown) =>
    new ConfigError(
      `invalid FHIR_BASE_URL: no SMART configuration (${(err as Error).message}); set FHIR_TOKEN_URL to name the token endpoint`,
    );

  // The token endpoint: named, discovered in time, or still being discovered (then the first token request waits
  // for it, and a failed discovery is tried again by the next request).
  let smart: SmartBackendAuth | undefined;
  let discovering: Promise<SmartBackendAuth> | undefined;
  if (config.FHIR_TOKEN_URL) smart = authFor(config.FHIR_TOKEN_URL);
  else {
    const first = discover();
    const found = await within(first, left());
    if (found === 'pending') {
      logger.warn(
        { waitedMs: io.waitMs ?? BOOT_WAIT_MS },
        'FHIR server: no SMART configuration yet; starting, GET /ready says when it comes',
      );
      const fromDiscovery = (p: Promise<string>) =>
        p.then(
          (url) => (smart = authFor(url)),
          (err: unknown) => {
            discovering = undefined;
            throw new FhirAuthError(`no token endpoint: ${(err as Error).message}`);
          },
        );
      discovering = fromDiscovery(first);
      discovering.catch(() => {});
      const again = () => (discovering ??= fromDiscovery(discover()));
      const auth: SmartFhirClient['auth'] = {
        get tokenUrl() {
          return smart?.tokenUrl;
        },
        authorization: async (signal) => (smart ?? (await untilAborted(again(), signal))).authorization(signal),
        invalidate: (authorization) => smart?.invalidate(authorization),
      };
      return started(auth, undefined);
    }
    if ('error' in found) throw noDiscovery(found.error);
    smart = authFor(found.value);
  }

  const token = await within(smart.authorization(), left());
  if (token !== 'pending' && 'error' in token) {
    const err = token.error;
    const code = err instanceof FhirAuthError ? err.oauthError : undefined;
    const variable = (code && VARIABLE_FOR[code]) ?? (config.FHIR_TOKEN_URL ? 'FHIR_TOKEN_URL' : 'FHIR_BASE_URL');
    throw new ConfigError(`invalid ${variable}: ${(err as Error).message}`);
  }
  if (token === 'pending') logger.warn('FHIR server: no token yet from the authorisation server; starting, GET /ready says when it comes');
  return started(smart, token === 'pending' ? undefined : smart.grantedScopes());

  /** `granted`: undefined while no token came, and then the scopes asked for decide the tools. */
  function started(auth: SmartFhirClient['auth'], granted: string[] | undefined): SmartFhirClient {
    const scopes = granted ?? config.FHIR_SCOPES!.split(/\s+/).filter(Boolean);
    const { allowed, leftOut, covered } = toolsFor(scopes);
    // read_resource and find_codes need no particular type; a grant covering no typed tool leaves them nothing to read.
    if (covered === 0) {
      throw new ConfigError(
        granted
          ? `invalid FHIR_SCOPES: the server granted ${JSON.stringify(scopes.join(' '))}, which covers no tool`
          : `invalid FHIR_SCOPES: ${JSON.stringify(scopes.join(' '))} covers no tool`,
      );
    }
    if (granted) {
      logger.info(
        { tokenUrl: auth.tokenUrl && urlForDisplay(auth.tokenUrl), clientId: config.FHIR_CLIENT_ID, alg: key.alg, kid: key.kid, granted },
        'FHIR server: SMART Backend Services token obtained',
      );
    }
    for (const { tool, reason } of leftOut) logger.warn({ tool }, `tool not offered: ${reason}`);
    return { fhir: createMedplumFhirClient({ baseUrl, auth }), auth, allowedTools: allowed };
  }
}
