// The one way write tools create resources: refused unless writes are enabled, validated before sending,
// and made idempotent by the tool call id (conditional create), so a retried call never writes twice.
import { createHash } from 'node:crypto';
import type { Identifier, Resource } from '@medplum/fhirtypes';
import type { FhirRequestTrace } from '../src/fhir/fhir-client.ts';
import { summarizeResource } from './summarize-resource.ts';
import { toolErrorResult, toolFailure } from './tool-error-result.ts';
import type { ToolContext, ToolResult } from './tool.ts';

export const TOOL_CALL_SYSTEM = 'urn:fhir-agent-gateway:tool-call';

/** The identifier value: the call id when it is search-safe, else a hash of it (no `|`, `,`, `&` or `\` to escape). */
export function idempotencyValue(callId: string): string {
  return /^[A-Za-z0-9_\-.:]{1,64}$/.test(callId) ? callId : `sha256-${createHash('sha256').update(callId).digest('hex').slice(0, 40)}`;
}

export function writesDisabled(tool: string): ToolResult {
  return toolFailure('writes_disabled', `${tool} writes to the record, and writes are disabled on this gateway. Tell the user what you would have written instead.`);
}

export async function writeResource(tool: string, build: () => Resource, ctx: ToolContext): Promise<ToolResult> {
  if (!ctx.writesEnabled) return writesDisabled(tool);
  if (!ctx.callId) return toolFailure('internal_error', 'A write needs a tool call id for idempotency');
  try {
    const value = idempotencyValue(ctx.callId);
    const key: Identifier = { system: TOOL_CALL_SYSTEM, value };
    const draft = build();
    const resource = { ...draft, identifier: [...((draft as { identifier?: Identifier[] }).identifier ?? []), key] } as Resource;
    // 201 means created now; 200 means the conditional create found this call's earlier write.
    let createStatus: number | undefined;
    const onTrace = (t: FhirRequestTrace) => {
      if (t.method === 'POST') createStatus = t.status;
      ctx.onTrace?.(t);
    };
    const saved = await ctx.fhir.createResource(resource, {
      signal: ctx.signal,
      onTrace,
      ifNoneExist: `identifier=${TOOL_CALL_SYSTEM}|${value}`,
    });
    const created = createStatus !== 200;
    return {
      ok: true,
      content: {
        created,
        note: created ? `${saved.resourceType}/${saved.id} created` : `${saved.resourceType}/${saved.id} already existed for this tool call; nothing new written`,
        resource: summarizeResource(saved),
      },
      written: [{ resourceType: saved.resourceType, id: saved.id!, created }],
    };
  } catch (err) {
    return toolErrorResult(err, ctx);
  }
}
