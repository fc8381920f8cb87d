// An ExecuteToolFn decorator: an `execute_tool <name>` span (a child of the model step that asked for the call)
// and the tool-call metrics; and, through the tool's onTrace, one span and one metric per FHIR request it made.
// Labels and attributes carry the tool's name, its outcome and the FHIR resource type, never arguments, URLs
// (search parameters are PHI) or results.
import { SpanKind, SpanStatusCode, context, trace, type Context } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
} from '@opentelemetry/semantic-conventions';
import type { ExecuteToolFn, ServerTools } from '../../agent/tool-contract.ts';
import type { FhirRequestTrace } from '../../fhir/client/fhir-client.ts';
import { isFhirResourceType } from '../../vocabulary/fhir/fhir-definitions.ts';
import { GEN_AI } from './gen-ai-attributes.ts';
import { currentStepSlot } from './step-slot.ts';
import type { Telemetry } from './telemetry.ts';

const LOOKS_LIKE_A_TYPE = /^[A-Z][A-Za-z]{1,63}$/;

/**
 * The resource type a FHIR URL addresses, from a closed set: a FHIR R4 resource type, `system` for the base
 * (batches, transactions, HAPI's `?_getpages=`), `other` for anything else. Next links come from the FHIR server,
 * so a label taken from their text would let it write any label and grow the series without bound. Never an id or
 * a query.
 */
function fhirResourceTypeOf(url: string): { resourceType: string; host: string } {
  try {
    const u = new URL(url);
    const segments = u.pathname.split('/');
    const type = segments.find(isFhirResourceType);
    return { resourceType: type ?? (segments.some((s) => LOOKS_LIKE_A_TYPE.test(s)) ? 'other' : 'system'), host: u.hostname };
  } catch {
    return { resourceType: 'unknown', host: '' };
  }
}

function instrumentTool(execute: ExecuteToolFn, o: Telemetry & { toolNames: readonly string[] }): ExecuteToolFn {
  const { metrics, tracer } = o;
  const known = new Set(o.toolNames);

  const fhirRequest = (parent: Context | undefined, t: FhirRequestTrace) => {
    const { resourceType, host } = fhirResourceTypeOf(t.url);
    metrics?.fhirRequest(t.method, resourceType, t.status, t.duration_ms / 1000);
    if (!tracer || !parent) return;
    const end = Date.now();
    const span = tracer.startSpan(
      `fhir ${t.method} ${resourceType}`,
      {
        kind: SpanKind.CLIENT,
        startTime: end - t.duration_ms,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: t.method,
          [ATTR_HTTP_RESPONSE_STATUS_CODE]: t.status,
          [ATTR_SERVER_ADDRESS]: host,
          'fhir.resource_type': resourceType,
        },
      },
      parent,
    );
    if (t.status === 0 || t.status >= 400) {
      span.setAttribute(ATTR_ERROR_TYPE, t.status === 0 ? 'no_response' : String(t.status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end(end);
  };

  return async (name, argumentsJson, ctx) => {
    // Tool names come from the model: anything not offered is one label, not a new series per invented name.
    const tool = known.has(name) ? name : '_unknown';
    const started = performance.now();
    let spanContext: Context | undefined;
    let span;
    if (tracer) {
      const step = currentStepSlot()?.step;
      const parent = step ? trace.setSpan(context.active(), step) : context.active();
      span = tracer.startSpan(
        `execute_tool ${tool}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            [GEN_AI.operationName]: 'execute_tool',
            [GEN_AI.toolName]: tool,
            [GEN_AI.toolCallId]: ctx.callId,
            [GEN_AI.toolType]: 'function',
          },
        },
        parent,
      );
      spanContext = trace.setSpan(parent, span);
    }
    const onTrace = (t: FhirRequestTrace) => {
      ctx.onTrace?.(t);
      fhirRequest(spanContext, t);
    };
    const run = () => execute(name, argumentsJson, { ...ctx, onTrace });
    const result = await (spanContext ? context.with(spanContext, run) : run());
    const outcome = result.ok ? 'ok' : result.error.code;
    metrics?.toolCall(tool, outcome, (performance.now() - started) / 1000);
    if (span) {
      if (!result.ok) {
        span.setAttribute(ATTR_ERROR_TYPE, outcome);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    }
    return result;
  };
}

/** The same tools, each call measured and traced (chat requests and MCP calls alike). */
export function instrumentServerTools(tools: ServerTools, t: Telemetry): ServerTools {
  if (!t.metrics && !t.tracer) return tools;
  const toolNames = tools.definitions({ writesEnabled: true }).map((d) => d.function.name);
  return { definitions: (o) => tools.definitions(o), execute: instrumentTool(tools.execute, { ...t, toolNames }) };
}
