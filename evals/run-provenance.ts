// Builds the header's provenance: the command line, every option, the seed, hashes of what the model was sent, the
// runtime and dependency versions, and the identity of the EHR the run read.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Bundle } from '@medplum/fhirtypes';
import { z } from 'zod';
import type { EhrIdentity, Provenance } from './provenance-schema.ts';

/** Flags whose value is a secret: kept out of the log. */
const SECRET_FLAGS = new Set(['--api-key', '--fhir-auth-header']);
const SECRET_OPTIONS = new Set(['apiKey', 'fhirAuthHeader']);
/** Dependencies whose version can move a result. */
const KEY_DEPENDENCY = /^(zod|openai|fastify|@medplum\/.+)$/;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    if (eq > 0 && SECRET_FLAGS.has(arg.slice(0, eq))) out.push(`${arg.slice(0, eq)}=[redacted]`);
    else if (SECRET_FLAGS.has(arg) && i + 1 < argv.length) {
      out.push(arg, '[redacted]');
      i++;
    } else out.push(arg);
  }
  return out;
}

/** Every option after defaults; secrets become `[redacted]` (so the log still says one was given). */
function recordedOptions(options: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) {
    if (v === undefined) out[k] = null;
    else out[k] = SECRET_OPTIONS.has(k) ? '[redacted]' : v;
  }
  return out;
}

function packageRoot(): string | undefined {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file) && readJson(file)?.name === 'fhir-agent-gateway') return dir;
    const up = path.dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

function readJson(file: string): { name?: string; version?: string; [k: string]: unknown } | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
  } catch {
    return undefined;
  }
}

/** The installed version, found as Node finds a package: in node_modules here or in any folder above. */
function installedVersion(root: string, name: string): string | undefined {
  for (let dir = root; ; dir = path.dirname(dir)) {
    const version = readJson(path.join(dir, 'node_modules', name, 'package.json'))?.version;
    if (version) return version;
    if (path.dirname(dir) === dir) return undefined;
  }
}

function packageVersions(): Pick<Provenance, 'package' | 'dependencies'> {
  const root = packageRoot();
  const pkg = root ? readJson(path.join(root, 'package.json')) : undefined;
  const declared = Object.keys({
    ...(pkg?.dependencies as object | undefined),
    ...(pkg?.optionalDependencies as object | undefined),
    ...(pkg?.peerDependencies as object | undefined),
    ...(pkg?.devDependencies as object | undefined),
  });
  const dependencies: Record<string, string> = {};
  for (const name of declared.filter((n) => KEY_DEPENDENCY.test(n)).sort()) {
    const version = root && installedVersion(root, name);
    if (version) dependencies[name] = version;
  }
  return { package: { name: pkg?.name ?? 'fhir-agent-gateway', version: pkg?.version ?? 'unknown' }, dependencies };
}

/** sha256 over the bundles in load order: the same data gives the same hash, whichever file it came from. */
export function bundlesSha256(bundles: readonly Bundle[]): string {
  const hash = createHash('sha256');
  for (const b of bundles) hash.update(JSON.stringify(b)).update('\n');
  return hash.digest('hex');
}

const CapabilitySchema = z.object({
  software: z.object({ name: z.string().optional(), version: z.string().optional() }).optional(),
  fhirVersion: z.string().optional(),
});

/** An external FHIR server's identity from its CapabilityStatement; null fields when `/metadata` did not answer. */
export async function externalEhrIdentity({
  baseUrl,
  headers,
  fetch: doFetch = fetch,
  sha256: loaded = null,
}: {
  baseUrl: string;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  sha256?: string | null;
}): Promise<EhrIdentity> {
  const identity: EhrIdentity = { kind: 'external', sha256: loaded, baseUrl, software: null, fhirVersion: null };
  try {
    const res = await doFetch(new URL('metadata', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`), {
      headers: { accept: 'application/fhir+json', ...headers },
      signal: AbortSignal.timeout(10_000),
    });
    const cap = CapabilitySchema.safeParse(res.ok ? await res.json() : undefined);
    if (cap.success) {
      identity.software = { name: cap.data.software?.name ?? null, version: cap.data.software?.version ?? null };
      identity.fhirVersion = cap.data.fhirVersion ?? null;
    }
  } catch {
    // An unreadable CapabilityStatement leaves the identity at its base URL; the run itself goes on.
  }
  return identity;
}

export function runProvenance(input: {
  argv: readonly string[];
  options: Record<string, unknown>;
  seed?: number;
  protocol: string;
  /** What the solver sends the model, when it calls one. */
  sends?: { systemPrompt: string; tools: unknown[] };
  ehr: EhrIdentity;
}): Provenance {
  return {
    argv: redactArgv(input.argv),
    options: recordedOptions(input.options),
    seed: input.seed ?? null,
    protocol: input.protocol,
    systemPromptSha256: input.sends ? sha256(input.sends.systemPrompt) : null,
    toolsSha256: input.sends ? sha256(JSON.stringify(input.sends.tools)) : null,
    node: process.version,
    ...packageVersions(),
    ehr: input.ehr,
  };
}
