// What a log header records about how a run was made, so a reader can rebuild it and `--resume` can refuse to blend
// two configurations. Additive to the header (older logs have none); built by run-provenance.ts.
import { z } from 'zod';

/** The FHIR data the run read: a hash of what was loaded, or the external server's own CapabilityStatement. */
const EhrIdentitySchema = z.object({
  /** generated: from the task file; loaded: `--ehr DIR`; fixtures: the built-in synthetic EHR; external: `--fhir-base-url`. */
  kind: z.enum(['generated', 'loaded', 'fixtures', 'external']),
  /** sha256 of the bundles as loaded (null for an external server that was not seeded by the run). */
  sha256: z.string().nullable(),
  baseUrl: z.string().optional(),
  /** From `GET <base>/metadata`; null when the server did not answer it. */
  software: z.object({ name: z.string().nullable(), version: z.string().nullable() }).nullable().optional(),
  fhirVersion: z.string().nullable().optional(),
});
export type EhrIdentity = z.infer<typeof EhrIdentitySchema>;

export const ProvenanceSchema = z.object({
  /** The command line as typed after the program name, with secrets (`--api-key`) redacted. */
  argv: z.array(z.string()),
  /** Every option of the run after defaults (timeouts, retries, context window, temperature, …), secrets left out. */
  options: z.record(z.string(), z.unknown()),
  /** Sent to the model as `seed`; null when not set. */
  seed: z.number().nullable(),
  /** The agent protocol: the project's tools (`tools`) or a benchmark's own (e.g. `medagentbench`). */
  protocol: z.string(),
  /** sha256 of the system prompt and of the tool definitions sent to the model (null when no model is called). */
  systemPromptSha256: z.string().nullable(),
  toolsSha256: z.string().nullable(),
  node: z.string(),
  package: z.object({ name: z.string(), version: z.string() }),
  /** Installed versions of the dependencies that shape a result (zod, openai, @medplum/*, fastify). */
  dependencies: z.record(z.string(), z.string()),
  ehr: EhrIdentitySchema,
});
export type Provenance = z.infer<typeof ProvenanceSchema>;
