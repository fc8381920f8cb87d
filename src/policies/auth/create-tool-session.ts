// The one place a tool call's context is assembled: the caller's FHIR client for the tool, its id, the write gate,
// the idempotency scope and the clock. The access control builds one per request (create-access-control.ts); the
// eval harness builds one per sample without keys.
import { internalToolFailure, type ToolErrorReporter } from '../../shared/internal-tool-failure.ts';
import type { ServerTools, ToolContext, ToolSession, ToolSessionScope } from '../../agent/tool-contract.ts';
import type { FhirClient, FhirRequestTrace } from '../../fhir/client/fhir-client.ts';
import { noteFhirWrite } from '../../vocabulary/fhir/fhir-write-generation.ts';

export interface ToolSessionOptions extends ToolSessionScope {
  tools: ServerTools;
  /** The raw client: its base URL names the server whose cached reference reads a write makes stale. */
  fhir: FhirClient;
  /** The client one tool's calls use (the caller's scopes and audit); default `fhir`. */
  fhirForTool?: (tool: string) => FhirClient;
  /** See ToolSession.callerId. Default ''. */
  callerId?: string;
  writesEnabled: boolean;
  /** Whether the write tools are offered; default `writesEnabled`. */
  offerWrites?: boolean;
  /** The tools' clock ("now" for relative dates). */
  now?: () => Date;
  /** Where an error thrown by `tools.execute` goes (the log): the model sees only its id. Default: stderr. */
  onError?: ToolErrorReporter;
}

export function createToolSession(o: ToolSessionOptions): ToolSession {
  const callerId = o.callerId ?? '';
  const now = o.now ?? (() => new Date());
  let idempotencyScope: string | undefined;
  const scope = () => (o.writesEnabled && o.idempotencyScope ? (idempotencyScope ??= o.idempotencyScope(callerId)) : undefined);
  return {
    callerId,
    definitions: o.tools.definitions({ writesEnabled: o.offerWrites ?? o.writesEnabled }),
    writesEnabled: o.writesEnabled,
    async execute(call, { signal, onTrace } = {}) {
      let wrote = false;
      const ctx: ToolContext = {
        fhir: o.fhirForTool?.(call.function.name) ?? o.fhir,
        signal,
        now,
        writesEnabled: o.writesEnabled,
        callId: call.id,
        callerId,
        idempotencyScope: scope(),
        onTrace: (t: FhirRequestTrace) => {
          if (t.method !== 'GET') wrote = true;
          onTrace?.(t);
        },
      };
      try {
        return await o.tools.execute(call.function.name, call.function.arguments, ctx);
      } catch (err) {
        // ServerTools promise never to throw (the catalogue's runTool answers internal_error with an id); an
        // embedder's own that does still gives the model an answer, and its message only to the log, as runTool does.
        if (signal?.aborted) return { ok: false, error: { code: 'aborted', message: 'aborted' } };
        return internalToolFailure(err, call.function.name, o.onError);
      } finally {
        // A write through the gateway makes the tools' cached reference reads of that server stale.
        if (wrote) noteFhirWrite(o.fhir.baseUrl);
      }
    },
  };
}
