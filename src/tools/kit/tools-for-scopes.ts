// Which tools a FHIR server's grant allows: a tool that reads or searches a type needs a SMART scope that
// permits reading and searching it (`system/Observation.rs`, `system/*.rs`, v1 `system/Observation.read`);
// a write tool needs `c` too. Tools the grant does not cover are left out, so the model is never offered them.
import { parseSmartScopeSyntax } from '../../vocabulary/fhir/smart-scope-syntax.ts';
import type { ToolDefinition } from './tool.ts';

const CONTEXTS = new Set(['system', 'user', 'patient']);

/** Does the grant allow `needs` (letters of c, r, s) on `resourceType`? */
export function scopesAllow(granted: readonly string[], resourceType: string, needs: string): boolean {
  const have = new Set<string>();
  for (const scope of granted) {
    const s = parseSmartScopeSyntax(scope);
    // A scope restricted by a search (`?…`) does not cover the whole type, so it covers no tool.
    if (!s || !CONTEXTS.has(s.context) || s.query || !/^[cruds]+$/.test(s.letters)) continue;
    if (s.resourceType !== '*' && s.resourceType !== resourceType) continue;
    for (const l of s.letters) have.add(l);
  }
  return [...needs].every((l) => have.has(l));
}

/** The tools the grant covers (`covered`: how many of them read or write a type), and why the others are not. */
export function toolsForScopes(
  tools: Iterable<ToolDefinition>,
  granted: readonly string[],
): { allowed: Set<string>; leftOut: Array<{ tool: string; reason: string }>; covered: number } {
  const allowed = new Set<string>();
  let covered = 0;
  const leftOut: Array<{ tool: string; reason: string }> = [];
  for (const t of tools) {
    const types = t.resourceTypes ?? [];
    const needs = t.write ? 'c' : 'rs';
    const missing = types.filter((type) => !scopesAllow(granted, type, needs));
    if (missing.length === 0) {
      allowed.add(t.name);
      if (types.length) covered++;
    } else
      leftOut.push({
        tool: t.name,
        reason: `the FHIR server granted no ${needs === 'c' ? 'create' : 'read and search'} scope for ${missing.join(', ')}`,
      });
  }
  return { allowed, leftOut, covered };
}
