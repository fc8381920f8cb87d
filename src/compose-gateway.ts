// The composition root: the one function that assembles the gateway. The server (src/server.ts), the test harness
// (test/support/gateway-harness.ts) and the eval environment (evals/environment/) all build it here, and this is
// the only module in src/ that imports tools/ and fixtures/. Everything it chooses can be passed in instead.
import type { Bundle } from '@medplum/fhirtypes';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { loadSyntheticEhrBundles } from '../fixtures/synthetic-ehr.ts';
import { executeTool, openAiToolDefinitions } from '../tools/index.ts';
import type { ServerTools } from './agent/tool-contract.ts';
import type { AuditSink } from './audit/audit-trail.ts';
import { buildApp, type AppDeps } from './app.ts';
import type { Config } from './config.ts';
import type { FhirClient } from './fhir/fhir-client.ts';
import { createGatewayDeps, type GatewayDeps } from './gateway-deps.ts';
import type { ModelUpstream } from './upstream/model-upstream.ts';

/** The FHIR tools of tools/. */
export const fhirTools: ServerTools = { definitions: openAiToolDefinitions, execute: executeTool };

export interface ComposeGatewayOptions extends Pick<AppDeps, 'now' | 'generateId'> {
  config: Config;
  logger: FastifyBaseLogger;
  /** Default: `fhirTools`. */
  tools?: ServerTools;
  /** What the embedded FHIR server is seeded with when FHIR_SEED is on. Default: the synthetic EHR of fixtures/. */
  seed?: () => Promise<Bundle[]>;
  /** The FHIR client for the tools. Default: from FHIR_BASE_URL, else the embedded server (mounted at /fhir). */
  fhir?: FhirClient;
  /** The model. Default: from UPSTREAM_BASE_URL, else LOCAL_MODEL, else none (chat answers 503). */
  model?: ModelUpstream;
  /** Where AuditEvents go. Default: from AUDIT_SINK (off without keys). */
  audit?: AuditSink;
}

export interface ComposedGateway {
  /** Built, not listening. */
  app: FastifyInstance;
  deps: GatewayDeps;
  /** Closes the app, then its dependencies (the in-process model last). */
  close(): Promise<void>;
}

export async function composeGateway(opts: ComposeGatewayOptions): Promise<ComposedGateway> {
  const { config, logger } = opts;
  const deps = await createGatewayDeps(config, logger, {
    tools: opts.tools ?? fhirTools,
    seed: config.FHIR_SEED ? (opts.seed ?? loadSyntheticEhrBundles) : undefined,
    fhir: opts.fhir,
    model: opts.model,
    audit: opts.audit,
  });
  let app: FastifyInstance;
  try {
    app = await buildApp({
      config,
      upstream: deps.upstream,
      logger,
      plugins: deps.plugins,
      readiness: deps.readiness,
      now: opts.now,
      generateId: opts.generateId,
    });
  } catch (err) {
    await deps.close();
    throw err;
  }
  return {
    app,
    deps,
    close: async () => {
      await app.close();
      await deps.close();
    },
  };
}
