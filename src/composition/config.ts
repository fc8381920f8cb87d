// Environment → typed Config. Every variable is declared once here; `--help` is generated from the same table.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parseApiKeysFile, sha256Of, type ApiKeyEntry } from '../policies/auth/api-keys-file.ts';
import { plainKeyAccess } from '../policies/auth/key-access.ts';
import { parseHost } from '../edge/http/parse-host.ts';
import { ConfigError } from '../shared/config-error.ts';
import { DIALECT_NAMES, DIALECTS } from '../model/dialects/index.ts';

const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const list = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

interface VarSpec {
  schema: z.ZodType;
  help: string;
  default?: string;
}

/** The public interface: names, defaults and meanings of every environment variable. */
export const CONFIG_VARS = {
  PORT: { schema: int(0, 65535), default: '8080', help: 'TCP port to listen on (0 = any free port).' },
  HOST: { schema: z.string().min(1), default: '127.0.0.1', help: 'Interface to bind. Auth may be off only on loopback.' },
  ALLOWED_HOSTS: {
    schema: list.refine(
      (hosts) => hosts.every((h) => parseHost(h) !== undefined),
      'each entry must be a host or host:port, e.g. gw.example.org or [::1]:8080',
    ),
    help: 'Host names (host or host:port, comma-separated) served besides loopback ones; requests with any other Host header are refused on a keyless gateway (DNS rebinding), and MCP accepts browser Origins on these hosts only.',
  },
  PUBLIC_BASE_URL: {
    schema: z
      .url({ protocol: /^https?$/ })
      .refine((u) => !u.endsWith('/'), 'no trailing slash')
      // zod runs every refinement even after the URL check failed, so this one must not assume a parsable URL.
      .refine((u) => {
        const url = URL.canParse(u) ? new URL(u) : undefined;
        return !url || (!url.username && !url.password && !url.search && !url.hash);
      }, 'no credentials, query or fragment'),
    help: 'Absolute http(s) URL the gateway is reached at, e.g. https://gw.example.org (no trailing slash): links (FHIR next, Location) are built from it instead of the Host header.',
  },
  API_KEYS: {
    schema: list,
    help: 'Accepted API keys, comma-separated: each may chat, read and search (system/*.rs); write through /fhir and the tools only with FHIR_WRITE_TOOLS=true. Unset (and no API_KEYS_FILE) = auth off (loopback HOST only).',
  },
  API_KEYS_FILE: {
    schema: z.string().min(1),
    help: 'YAML/JSON file of keys (SHA-256 only) with SMART v2 scopes, flags and patient lists; `fhir-agent-gateway key` makes an entry.',
  },
  AUDIT_SINK: {
    schema: z.enum(['file', 'fhir', 'off']),
    help: 'Where the AuditEvent of every FHIR read and write goes: file (AUDIT_FILE), fhir (the FHIR server) or off. Default: file when keys are configured, off without keys.',
  },
  AUDIT_FILE: {
    schema: z.string().min(1),
    default: 'audit/audit.ndjson',
    help: 'Append-only NDJSON audit file (fsync per record), for AUDIT_SINK=file.',
  },
  AUDIT_FILE_MAX_BYTES: {
    schema: int(4096, 1_099_511_627_776),
    default: '104857600',
    help: 'Size at which the audit file is renamed to <AUDIT_FILE>.<time> and a new one started.',
  },
  AUDIT_FILE_MAX_TOTAL_BYTES: {
    schema: int(4096, 1_099_511_627_776),
    default: '10737418240',
    help: 'Most bytes the audit file and its rotated files may take together; past it the oldest rotated files are deleted (logged), or, with AUDIT_FILE_DELETE_OLDEST=false, audit writes are refused with an error naming this variable.',
  },
  AUDIT_FILE_DELETE_OLDEST: {
    schema: bool,
    default: 'true',
    help: 'Whether the oldest rotated audit files are deleted to stay within AUDIT_FILE_MAX_TOTAL_BYTES (false: writes are refused instead).',
  },
  AUDIT_KEY_MAX_BYTES_PER_MINUTE: {
    schema: int(0, 1_099_511_627_776),
    default: '16777216',
    help: "Bytes of audit one API key may cause in a minute (per replica, 0 = unlimited); past it the key's requests get 429 until the minute has passed.",
  },
  TOOL_MAX_RESOURCES_READ: {
    schema: int(100, 1_000_000),
    default: '25000',
    help: 'Most FHIR resources one tool call may read for a key (searches, scans and catalogue reads together); past it the call fails with a fhir_error naming this limit.',
  },
  UPSTREAM_BASE_URL: {
    schema: z.url({ protocol: /^https?$/ }).refine((u) => /\/v1\/?$/.test(u), 'must end in /v1'),
    help: 'OpenAI-compatible upstream base URL ending in /v1, e.g. http://127.0.0.1:11434/v1 (Ollama).',
  },
  UPSTREAM_API_KEY: { schema: z.string(), help: 'Bearer key sent to the upstream.' },
  UPSTREAM_MODEL: { schema: z.string().min(1), help: 'Model name the upstream expects (defaults to the part of MODEL_ID after "/").' },
  MODEL_ID: {
    schema: z.string().regex(/^[\w.-]+\/[\w.:-]+$/, 'must look like <provider>/<model_name>'),
    default: 'fhir-agent/clinical-reasoner',
    help: 'Public model id, <provider>/<model_name>; the only model clients may ask for.',
  },
  UPSTREAM_FLAVOUR: {
    schema: z.enum(['auto', ...DIALECT_NAMES]),
    default: 'auto',
    help: `Upstream dialect: ${DIALECT_NAMES.map((n) => (DIALECTS[n].note ? `${n} (${DIALECTS[n].note})` : n)).join('|')}, or auto-detect.`,
  },
  UPSTREAM_TIMEOUT_MS: {
    schema: int(100, 3_600_000),
    default: '600000',
    help: 'Upstream timeout per attempt: for the response headers, and for each gap between streamed chunks.',
  },
  UPSTREAM_MAX_RETRIES: { schema: int(0, 10), default: '2', help: 'Retries for 429, 5xx and network errors (before the first byte only).' },
  REQUEST_DEADLINE_MS: { schema: int(100, 3_600_000), default: '900000', help: 'Overall deadline for one chat request, retries included.' },
  READY_TIMEOUT_MS: {
    schema: int(100, 60_000),
    default: '2000',
    help: 'GET /ready: longest wait for the upstream (GET /models) and the FHIR server (GET /metadata).',
  },
  READY_CACHE_MS: {
    schema: int(0, 3_600_000),
    default: '5000',
    help: 'GET /ready: how long a readiness result is reused, so frequent probes cost the dependencies little.',
  },
  RATE_LIMIT_PER_MINUTE: { schema: int(0, 1_000_000_000), default: '600', help: 'Requests per minute per API key (0 = unlimited).' },
  REDIS_URL: {
    schema: z.url({ protocol: /^rediss?$/ }),
    help: 'redis:// or rediss:// URL of a Redis the replicas share: the per-key rate limit (a sliding 60 s window) and the tool-result cache for mixed turns. Unset = both in process. Redis down = each replica limits on its own (logged once a minute).',
  },
  REDIS_KEY_PREFIX: {
    schema: z.string().regex(/^[\w.:-]{0,64}$/, 'letters, digits and _ . : - only, at most 64'),
    default: 'fhir-agent-gateway:',
    help: 'Prefix of every Redis key, so deployments can share one Redis.',
  },
  REDIS_TIMEOUT_MS: {
    schema: int(10, 60_000),
    default: '250',
    help: 'Longest wait for one Redis command; past it the request uses the in-process fallback.',
  },
  BODY_LIMIT_BYTES: { schema: int(1024, 1_073_741_824), default: '26214400', help: 'Largest accepted request body.' },
  IMAGE_MAX_BYTES: { schema: int(1, 1_073_741_824), default: '20971520', help: 'Largest decoded data: image in a message.' },
  LOG_LEVEL: { schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), default: 'info', help: 'pino log level.' },
  LOG_MESSAGE_CONTENT: { schema: bool, default: 'false', help: 'Log message contents (may hold PHI). Off by default.' },
  FHIR_BASE_URL: {
    schema: z.url({ protocol: /^https?$/ }),
    help: 'External FHIR R4 server (e.g. HAPI). Unset = embedded server at /fhir.',
  },
  FHIR_AUTH_HEADER: {
    schema: z.string().regex(/^[^\r\n]+$/),
    help: 'Authorization header value sent to FHIR_BASE_URL, e.g. "Bearer abc".',
  },
  FHIR_AUTH: {
    schema: z.enum(['smart-backend']),
    help: 'smart-backend: get tokens for FHIR_BASE_URL with SMART Backend Services (FHIR_CLIENT_ID, FHIR_PRIVATE_KEY_FILE, FHIR_SCOPES). Unset: FHIR_AUTH_HEADER or nothing.',
  },
  FHIR_CLIENT_ID: {
    schema: z.string().min(1).max(500),
    help: 'FHIR_AUTH=smart-backend: the client id registered with the authorisation server.',
  },
  FHIR_PRIVATE_KEY_FILE: {
    schema: z.string().min(1),
    help: 'FHIR_AUTH=smart-backend: the signing key, PKCS#8 PEM or JWK, RSA (RS384) or EC P-384 (ES384); its public half registered with the server.',
  },
  FHIR_SCOPES: {
    schema: z.string().regex(/^[\x21-\x7e]+( [\x21-\x7e]+)*$/, 'must be scopes separated by single spaces'),
    help: 'FHIR_AUTH=smart-backend: SMART v2 scopes asked for, e.g. "system/Patient.rs system/Observation.rs"; tools the grant does not cover are not offered.',
  },
  FHIR_TOKEN_URL: {
    schema: z.url({ protocol: /^https?$/ }),
    help: 'FHIR_AUTH=smart-backend: the token endpoint. Unset: read from <FHIR_BASE_URL>/.well-known/smart-configuration.',
  },
  TOOL_RESULT_MAX_TOKENS: {
    schema: int(200, 1_000_000),
    default: '2000',
    help: 'Token budget of one tool result; past it a search keeps the newest results, says how many were left out, and returns a continuation.',
  },
  FHIR_WRITE_TOOLS: {
    schema: bool,
    default: 'false',
    help: 'Enable the write tools (record_observation, order_medication, order_service) for keys allowed to write; also grants plain API_KEYS (and the keyless sandbox) write access through /fhir.',
  },
  FHIR_SEED: { schema: bool, default: 'true', help: 'Seed the embedded FHIR server with the synthetic EHR at startup.' },
  FHIR_SEED_DIR: {
    schema: z.string().min(1),
    help: 'Seed the embedded FHIR server from this folder of Bundle JSON and/or bulk NDJSON (e.g. the MIMIC-IV demo on FHIR) instead of the synthetic EHR; `fhir-agent-gateway serve --ehr <dir>` sets it.',
  },
  FHIR_MAX_BUNDLE_ENTRIES: {
    schema: int(1, 100_000),
    default: '100',
    help: 'Most entries that read or search (GET, conditional) in one batch or transaction sent to the embedded server; more is a 400 naming this limit.',
  },
  FHIR_MAX_RESPONSE_BYTES: {
    schema: int(65_536, 1_073_741_824),
    default: '33554432',
    help: 'Largest answer of the embedded FHIR server; a larger one is a 400 (too-costly) naming this limit, before anything is sent.',
  },
  SERVER_TOOLS: { schema: bool, default: 'true', help: 'Run the FHIR tools server-side on chat requests (false = pure pass-through).' },
  TOOLS_MODULE: {
    schema: z.string().min(1),
    help: 'A JavaScript module whose default export is an array of tools made with defineTool (from fhir-agent-gateway/tools), or a function of the configuration returning one: they join the built-in tools in chat, MCP and /metrics. `fhir-agent-gateway serve --tools <module>` sets it.',
  },
  AGENT_MAX_STEPS: { schema: int(1, 100), default: '8', help: 'Most model calls per chat request in the tool loop.' },
  AGENT_MAX_TOOL_CALLS: { schema: int(1, 1000), default: '32', help: 'Most server-side tool calls per chat request.' },
  AGENT_DEADLINE_MS: { schema: int(100, 3_600_000), default: '300000', help: 'Deadline for the whole tool loop of one request.' },
  UPSTREAM_TOOL_MODE: {
    schema: z.enum(['auto', 'native', 'prompted']),
    default: 'auto',
    help: 'Tool calls upstream: native (the `tools` field), prompted (tools in the system prompt, <tool_call> parsed from text), or auto (prompted for llama-cpp-python, native otherwise).',
  },
  LOCAL_MODEL: {
    schema: z.string().min(1),
    help: 'Run a GGUF model in process (node-llama-cpp, CPU): a .gguf path or an hf: URI. Used when UPSTREAM_BASE_URL is unset.',
  },
  LOCAL_MODEL_THREADS: {
    schema: int(1, 256),
    default: '1',
    help: 'CPU threads for the in-process model (the HTTP server shares the cores).',
  },
  LOCAL_MODEL_CONTEXT: {
    schema: int(512, 262_144),
    default: '8192',
    help: "Context tokens per sequence (capped at the model's training context).",
  },
  LOCAL_MODEL_SEQUENCES: {
    schema: int(1, 64),
    default: '2',
    help: 'Requests generated at once, each on its own KV cache (so a tool prompt stays cached beside other work).',
  },
  LOCAL_MODEL_QUEUE: { schema: int(0, 10_000), default: '32', help: 'Requests that may wait for a free sequence; more answer 429.' },
  LOCAL_MODEL_WARM: {
    schema: bool,
    default: 'true',
    help: 'At boot, evaluate the FHIR tools prompt prefix into the KV cache (when SERVER_TOOLS is on), so the first tool request is fast.',
  },
  METRICS: {
    schema: bool,
    default: 'true',
    help: 'Prometheus metrics at GET /metrics (no message content, no patient ids in labels).',
  },
  METRICS_TOKEN: {
    schema: z.string().min(16),
    help: 'Bearer token a scraper sends for GET /metrics (then required from every client). Unset: /metrics answers loopback clients only.',
  },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    schema: z.url({ protocol: /^https?$/ }),
    help: 'OTLP/HTTP collector base URL, e.g. http://127.0.0.1:4318: traces go to <it>/v1/traces. Unset = no tracing at all.',
  },
  OTEL_SERVICE_NAME: { schema: z.string().min(1), default: 'fhir-agent-gateway', help: 'service.name of the exported traces.' },
  LOCAL_MODEL_CACHE_DIR: {
    schema: z.string().min(1),
    default: 'node_modules/.cache/fhir-agent-gateway/models',
    help: 'Where hf: models are downloaded and cached.',
  },
} satisfies Record<string, VarSpec>;

type Vars = typeof CONFIG_VARS;
type Parsed = {
  [K in keyof Vars]: Vars[K] extends { default: string } ? z.output<Vars[K]['schema']> : z.output<Vars[K]['schema']> | undefined;
};

export interface Config extends Omit<Parsed, 'API_KEYS'> {
  API_KEYS: string[];
  /** Every accepted key, from API_KEYS and API_KEYS_FILE, with what it may do. */
  apiKeys: ApiKeyEntry[];
  /** AUDIT_SINK resolved: off without keys. */
  auditSink: 'file' | 'fhir' | 'off';
  /** Resolved upstream model name. */
  upstreamModel: string;
  authEnabled: boolean;
}

export { ConfigError };

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
const isLoopbackHost = (host: string): boolean => LOOPBACK.has(host) || host.startsWith('127.');

/** Validates the environment. Throws ConfigError with one line naming the first bad variable. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(CONFIG_VARS) as Array<[string, VarSpec]>) {
    const raw = env[name] === '' ? undefined : (env[name] ?? spec.default);
    if (raw === undefined) continue;
    const parsed = spec.schema.safeParse(raw);
    if (!parsed.success) {
      // REDIS_URL may carry a password (redis://:secret@host).
      const secret = ['KEY', 'AUTH', 'TOKEN', 'REDIS_URL'].some((s) => name.includes(s));
      const shown = secret ? '<redacted>' : JSON.stringify(raw);
      throw new ConfigError(`invalid ${name}=${shown}: ${parsed.error.issues[0]?.message ?? 'invalid value'}`);
    }
    out[name] = parsed.data;
  }
  const parsed = out as Parsed;
  const keys = parsed.API_KEYS ?? [];
  const plain = keys.map((key, i) => ({
    sha256: sha256Of(key),
    access: plainKeyAccess(`API_KEYS#${i + 1}`, { writes: parsed.FHIR_WRITE_TOOLS }),
  }));
  const apiKeys = [...plain, ...readApiKeysFile(parsed.API_KEYS_FILE, plain)];
  if (apiKeys.length === 0 && !isLoopbackHost(parsed.HOST)) {
    throw new ConfigError(`invalid API_KEYS: required when HOST=${parsed.HOST} is not a loopback address`);
  }
  checkSmartBackend(parsed);
  if (parsed.AUDIT_FILE_MAX_TOTAL_BYTES < parsed.AUDIT_FILE_MAX_BYTES)
    throw new ConfigError(
      `invalid AUDIT_FILE_MAX_TOTAL_BYTES=${parsed.AUDIT_FILE_MAX_TOTAL_BYTES}: must be at least AUDIT_FILE_MAX_BYTES (${parsed.AUDIT_FILE_MAX_BYTES})`,
    );
  const upstreamModel = parsed.UPSTREAM_MODEL ?? parsed.MODEL_ID.split('/').slice(1).join('/');
  const authEnabled = apiKeys.length > 0;
  return { ...parsed, API_KEYS: keys, apiKeys, auditSink: authEnabled ? (parsed.AUDIT_SINK ?? 'file') : 'off', upstreamModel, authEnabled };
}

/** FHIR_AUTH=smart-backend needs its four variables, and excludes a static header. */
function checkSmartBackend(p: Parsed): void {
  if (p.FHIR_AUTH !== 'smart-backend') return;
  for (const name of ['FHIR_BASE_URL', 'FHIR_CLIENT_ID', 'FHIR_PRIVATE_KEY_FILE', 'FHIR_SCOPES'] as const) {
    if (p[name] === undefined) throw new ConfigError(`invalid ${name}: required with FHIR_AUTH=smart-backend`);
  }
  if (p.FHIR_AUTH_HEADER !== undefined)
    throw new ConfigError('invalid FHIR_AUTH_HEADER: not with FHIR_AUTH=smart-backend (tokens are fetched)');
}

function readApiKeysFile(path: string | undefined, plain: ApiKeyEntry[]): ApiKeyEntry[] {
  if (path === undefined) return [];
  const fail = (why: string) => new ConfigError(`invalid API_KEYS_FILE=${JSON.stringify(path)}: ${why}`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw fail(`cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let entries: ApiKeyEntry[];
  try {
    entries = parseApiKeysFile(text);
  } catch (err) {
    throw fail((err as Error).message);
  }
  const twice = entries.find((e) => plain.some((p) => p.sha256.equals(e.sha256)));
  if (twice) throw fail(`key ${twice.access.id} is also in API_KEYS`);
  return entries;
}

export function configHelp(): string {
  const lines = ['fhir-agent-gateway: configuration (environment variables)', ''];
  for (const [name, spec] of Object.entries(CONFIG_VARS) as Array<[string, VarSpec]>) {
    lines.push(`  ${name.padEnd(22)} ${spec.help}${spec.default !== undefined ? ` [default: ${spec.default}]` : ''}`);
  }
  return lines.join('\n');
}
