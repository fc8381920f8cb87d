// Per-key access and the audit, joined to the two ways FHIR data leaves the gateway: the /fhir routes (a guard
// around the embedded server) and the agent's tools (a tool session per request: a scoped FhirClient per tool, and
// the tools offered).
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { ServerTools, ToolSession, ToolSessionScope } from '../../agent/tool-contract.ts';
import { createAuditBudget } from '../audit/audit-budget.ts';
import { createAuditSink, type AuditSinkConfig } from '../audit/create-audit-sink.ts';
import { createAuditTrail, noAuditTrail, type AuditSink, type AuditTrail } from '../audit/audit-trail.ts';
import type { EmbeddedFhirRequest, EmbeddedFhirResponse, EmbeddedFhirServer } from '../../fhir/server/embedded-fhir-server.ts';
import type { FhirClient } from '../../fhir/client/fhir-client.ts';
import { noteFhirWrite } from '../../vocabulary/fhir/fhir-write-generation.ts';
import { guardFhirRequest } from './guard-fhir-request.ts';
import { toolAccess, toolsMayWrite, type KeyAccess } from './key-access.ts';
import { createScopedFhirClient } from './scoped-fhir-client.ts';
import { createToolSession } from './create-tool-session.ts';
import type { CallerContext } from '../../model/model-upstream.ts';
import type { RateDecision } from '../rate-limit/rate-limit.ts';

export interface AccessControl {
  /** Runs a /fhir request under the caller's scopes, and audits it. */
  guardFhir(req: FastifyRequest, request: EmbeddedFhirRequest, handle: EmbeddedFhirServer['handle']): Promise<EmbeddedFhirResponse>;
  /**
   * One request's tool session: a key's tools offered, scoped and audited as its access allows (chat requests pass
   * the key's KeyAccess as their CallerContext; MCP passes it too); without a caller (in process), the gateway-wide
   * tools on the raw client.
   */
  toolSession(caller: CallerContext | undefined, scope?: ToolSessionScope): ToolSession;
  /** Whether a key may start another request under AUDIT_KEY_MAX_BYTES_PER_MINUTE (the app's guard answers 429). */
  auditBudget(callerId: string): RateDecision;
  close(): Promise<void>;
}

export interface AccessControlOptions {
  /** From src/composition/config.ts. */
  config: AuditSinkConfig & {
    FHIR_WRITE_TOOLS: boolean;
    FHIR_BASE_URL?: string;
    AUDIT_KEY_MAX_BYTES_PER_MINUTE: number;
    TOOL_MAX_RESOURCES_READ: number;
  };
  logger: FastifyBaseLogger;
  /** The raw client: the tools' clients wrap it, and AUDIT_SINK=fhir writes through it. */
  fhir: FhirClient;
  tools: ServerTools;
  /** Instead of AUDIT_SINK. */
  sink?: AuditSink;
  now?: () => Date;
}

/** A request that reached /fhir without the auth hook having named its key may do nothing. */
const NOTHING: KeyAccess = { id: 'unknown', scopes: [], flags: new Set(), patients: new Set(), audited: false };

export async function createAccessControl(o: AccessControlOptions): Promise<AccessControl> {
  const sink =
    o.sink ??
    (await createAuditSink(o.config, o.fhir, (file, bytes) =>
      o.logger.warn({ file, bytes }, 'audit file deleted: AUDIT_FILE_MAX_TOTAL_BYTES reached'),
    ));
  const budget = createAuditBudget({ perMinute: o.config.AUDIT_KEY_MAX_BYTES_PER_MINUTE, now: o.now && (() => o.now!().getTime()) });
  if (o.config.auditSink === 'fhir' && !o.config.FHIR_BASE_URL && !o.sink) {
    o.logger.warn('AUDIT_SINK=fhir with the embedded FHIR server: the audit lives in memory and is lost at restart (use AUDIT_SINK=file)');
  }
  o.logger.info(
    { sink: o.sink ? 'injected' : o.config.auditSink, file: o.config.auditSink === 'file' ? o.config.AUDIT_FILE : undefined },
    'audit',
  );
  const trail = sink
    ? createAuditTrail({
        sink,
        now: o.now,
        onError: (err, facts) => o.logger.error({ err: err.message, ...facts }, 'audit record not written'),
        onWritten: budget.spend,
      })
    : noAuditTrail;
  const auditFor = (access: KeyAccess): AuditTrail => (access.audited ? trail : noAuditTrail);

  const onError = (err: unknown, facts: { tool: string; errorId: string }) => o.logger.error({ err, ...facts }, 'tool failed');
  const toolSession = (caller: CallerContext | undefined, scope: ToolSessionScope = {}): ToolSession => {
    if (!caller) return createToolSession({ ...scope, tools: o.tools, fhir: o.fhir, writesEnabled: o.config.FHIR_WRITE_TOOLS, onError });
    const access = caller as KeyAccess;
    const scoped = toolAccess(access);
    const audit = auditFor(access);
    return createToolSession({
      ...scope,
      tools: o.tools,
      fhir: o.fhir,
      onError,
      fhirForTool: (tool) =>
        createScopedFhirClient({ fhir: o.fhir, access: scoped, audit, tool, maxRead: o.config.TOOL_MAX_RESOURCES_READ }),
      callerId: access.id,
      // Writes stay on when the deployment allows them, so a write the key may not make is `forbidden`, not
      // `writes_disabled`; the write tools are only offered to keys that may write.
      writesEnabled: o.config.FHIR_WRITE_TOOLS,
      // Asked per request: what is offered follows the FHIR server's CapabilityStatement as GET /ready reads it again.
      offerWrites: toolsMayWrite(access) && o.config.FHIR_WRITE_TOOLS,
    });
  };

  return {
    guardFhir(req, request, handle) {
      const access = req.keyAccess ?? NOTHING;
      // Any other method may write (a POST search too, harmlessly): the tools' cached reference reads go stale.
      const writing: typeof handle = (r) => handle(r).finally(() => noteFhirWrite(o.fhir.baseUrl));
      return guardFhirRequest(request, {
        access,
        audit: auditFor(access),
        address: req.ip,
        handle: request.method === 'GET' ? handle : writing,
      });
    },
    toolSession,
    auditBudget: budget.check,
    close: async () => {
      await sink?.close();
    },
  };
}
