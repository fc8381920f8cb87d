// What a FHIR server says it can search (its CapabilityStatement), and how the tools follow it: each search sends
// only the parameters the server declares for its type (a filter it cannot apply is left out and the result says
// so), a tool whose type the server cannot search by patient is not offered, and the description the model sees
// names the filters the server lacks.
import type { SearchParams } from '../../fhir/client/fhir-client.ts';

export type { SearchCapabilities } from '../../fhir/client/search-capabilities-of.ts';
import type { SearchCapabilities } from '../../fhir/client/search-capabilities-of.ts';

/** Parameters every server takes whatever it declares: paging, includes, totals and ids. */
const ALWAYS = new Set(['_count', '_include', '_include:iterate', '_revinclude', '_total', '_summary', '_elements', '_id', '_lastUpdated']);
const baseName = (key: string) => key.split(':')[0];

/** The parameters of `params` the server declares (all of them when it says nothing about the type), and the rest. */
export function declaredParams(
  type: string,
  params: SearchParams,
  caps: SearchCapabilities | undefined,
): { params: SearchParams; dropped: string[] } {
  const declared = caps?.get(type);
  if (!declared) return { params, dropped: [] };
  const out: SearchParams = {};
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (key === '_sort') {
      // Sort fields the server cannot sort by are left out; `_id` is kept as the tie-break.
      const fields = String(value)
        .split(',')
        .filter((f) => ALWAYS.has(f.replace(/^-/, '')) || declared.has(f.replace(/^-/, '')));
      if (fields.length) out._sort = fields.join(',');
      continue;
    }
    if (ALWAYS.has(key) || declared.has(baseName(key))) out[key] = value;
    else dropped.push(key);
  }
  return { params: out, dropped };
}

/** A tool the server cannot run: its type is not searchable, or not by patient when the tool needs that. */
export function missingEssentials(type: string, sends: readonly string[], caps: SearchCapabilities | undefined): string | undefined {
  if (!caps) return undefined;
  const declared = caps.get(type);
  if (!declared) return `the FHIR server does not declare ${type} searches`;
  if (sends.includes('patient') && !declared.has('patient')) return `the FHIR server cannot search ${type} by patient`;
  return undefined;
}

/** The filters a tool may send that the server does not declare, for its description. */
export function undeclaredFilters(type: string, sends: readonly string[], caps: SearchCapabilities | undefined): string[] {
  const declared = caps?.get(type);
  if (!declared) return [];
  return sends.filter((k) => k !== '_sort' && !ALWAYS.has(k) && !declared.has(baseName(k)));
}
