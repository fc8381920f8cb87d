// Which resources a tool result showed the model: every `{ resourceType, id }` object inside it (the tools'
// summaries and raw resources carry both). The gateway reports them per tool call (`fhir_agent.tool_calls[].shown`)
// so an evaluation scores retrieval on what the agent saw, not only on what it read by id.

/** `Type/id` of every resource object in `value` (not Bundles or OperationOutcomes), each once, in order. */
export function shownReferences(value: unknown): string[] {
  const out = new Set<string>();
  const walk = (v: unknown, depth: number) => {
    if (depth > 32 || !v || typeof v !== 'object') return;
    if (Array.isArray(v)) return v.forEach((x) => walk(x, depth + 1));
    const o = v as Record<string, unknown>;
    if (
      typeof o.resourceType === 'string' &&
      typeof o.id === 'string' &&
      o.resourceType !== 'Bundle' &&
      o.resourceType !== 'OperationOutcome'
    ) {
      out.add(`${o.resourceType}/${o.id}`);
    }
    for (const x of Object.values(o)) walk(x, depth + 1);
  };
  walk(value, 0);
  return [...out];
}
