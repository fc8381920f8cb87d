// The one way write tools create resources: refused unless writes are enabled, validated before sending, and
// made idempotent (conditional create) by a key over the caller's scope, the tool call id, the tool and its
// arguments: a retried call never writes twice, and another conversation's `call_0` is never mistaken for it.
import { createHash } from 'node:crypto';
import type { Identifier, Resource } from '@medplum/fhirtypes';
import type { FhirRequestTrace } from '../../fhir/client/fhir-client.ts';
import { summarizeResource } from '../summaries/summarize-resource.ts';
import { expectedToolFailure, toolFailure } from '../kit/tool-error-result.ts';
import type { ToolContext, ToolResult } from '../kit/tool.ts';

const TOOL_CALL_SYSTEM = 'urn:fhir-agent-gateway:tool-call';
const IDEMPOTENCY_SYSTEM = 'urn:fhir-agent-gateway:idempotency';

/** JSON with sorted keys, so the same arguments always give the same key. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  return `{${entries
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`)
    .join(',')}}`;
}

function idempotencyKey(o: { scope?: string; callId: string; tool: string; input: unknown }): string {
  return createHash('sha256')
    .update(`${o.scope ?? ''}\0${o.callId}\0${o.tool}\0${canonicalJson(o.input)}`)
    .digest('hex')
    .slice(0, 40);
}

/** The identifier value: the call id when it is search-safe, else a hash of it (no `|`, `,`, `&` or `\` to escape). */
function idempotencyValue(callId: string): string {
  return /^[A-Za-z0-9_\-.:]{1,64}$/.test(callId) ? callId : `sha256-${createHash('sha256').update(callId).digest('hex').slice(0, 40)}`;
}

export function writesDisabled(tool: string): ToolResult {
  return toolFailure(
    'writes_disabled',
    `${tool} writes to the record, and writes are disabled on this gateway. Tell the user what you would have written instead.`,
  );
}

export async function writeResource(tool: string, input: unknown, build: () => Resource, ctx: ToolContext): Promise<ToolResult> {
  if (!ctx.writesEnabled) return writesDisabled(tool);
  if (!ctx.callId) return toolFailure('internal_error', 'A write needs a tool call id for idempotency');
  try {
    const key = idempotencyKey({ scope: ctx.idempotencyScope, callId: ctx.callId, tool, input });
    // The call id stays searchable for people; the conditional create goes by the idempotency key.
    const ids: Identifier[] = [
      { system: TOOL_CALL_SYSTEM, value: idempotencyValue(ctx.callId) },
      { system: IDEMPOTENCY_SYSTEM, value: key },
    ];
    const draft = build();
    const resource = { ...draft, identifier: [...((draft as { identifier?: Identifier[] }).identifier ?? []), ...ids] } as Resource;
    // 201 means created now; 200 means the conditional create found this call's earlier write.
    let createStatus: number | undefined;
    const onTrace = (t: FhirRequestTrace) => {
      if (t.method === 'POST') createStatus = t.status;
      ctx.onTrace?.(t);
    };
    const saved = await ctx.fhir.createResource(resource, {
      signal: ctx.signal,
      onTrace,
      ifNoneExist: `identifier=${IDEMPOTENCY_SYSTEM}|${key}`,
    });
    const created = createStatus !== 200;
    return {
      ok: true,
      content: {
        created,
        note: created
          ? `${saved.resourceType}/${saved.id} created`
          : `${saved.resourceType}/${saved.id} already existed for this tool call; nothing new written`,
        resource: summarizeResource(saved),
      },
      written: [{ resourceType: saved.resourceType, id: saved.id!, created }],
    };
  } catch (err) {
    return expectedToolFailure(err, ctx);
  }
}
