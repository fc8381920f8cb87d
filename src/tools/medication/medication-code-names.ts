// Names for drug codes that carry none: MIMIC's administrations code a drug by its formulary code alone, and the
// name is on the catalogue Medication that lists the same code among its identifiers (or codings). One batched
// search per few dozen codes, by identifier and then by code for what is still unnamed. A nicety, like
// reference-names.ts: when a lookup fails the code stays.
import type { CodeableConcept, Coding, Medication, Resource } from '@medplum/fhirtypes';
import { codeKey, conceptName, medicationName } from './medication-name.ts';
import { serverScoped } from '../kit/server-scoped-cache.ts';
import type { ToolContext } from '../kit/tool.ts';

const BATCH = 40;
/** `code:<system>|<code>` → name, found on this server for this caller: kept across calls (server-scoped-cache.ts). */
const namedOf = serverScoped(() => new Map<string, string>());
/** Entries one server-and-caller cache of reference data keeps (here and reference-names.ts); past it, used but not kept. */
export const REFERENCE_KEPT_MAX = 20_000;

/** The concept an order, administration, dispense or statement names its drug with, if it has one. */
const medicationConceptOf = (r: Resource): CodeableConcept | undefined =>
  (r as { medicationCodeableConcept?: CodeableConcept }).medicationCodeableConcept;

/** FHIR token escaping: a `,` `|` `$` or `\` inside a value is preceded by `\`. */
const escapeToken = (s: string) => s.replace(/[\\,|$]/g, (c) => `\\${c}`);
export const tokenOf = (c: Pick<Coding, 'system' | 'code'>) => `${escapeToken(c.system ?? '')}|${escapeToken(c.code ?? '')}`;

/** `code:<system>|<code>` → drug name, for every nameless drug code in `resources`; adds to `names`. */
export async function medicationCodeNames(resources: readonly Resource[], names: Map<string, string>, ctx: ToolContext): Promise<void> {
  const wanted = new Map<string, Coding>();
  const kept = namedOf(ctx);
  for (const r of resources) {
    const cc = medicationConceptOf(r);
    if (!cc || conceptName(cc, names)) continue;
    for (const c of cc.coding ?? []) {
      if (!c.system || !c.code || names.has(codeKey(c))) continue;
      const known = kept.get(codeKey(c));
      if (known) names.set(codeKey(c), known);
      else wanted.set(codeKey(c), c);
    }
  }
  for (const param of ['identifier', 'code']) {
    const missing = [...wanted.values()].filter((c) => !names.has(codeKey(c)));
    for (let i = 0; i < missing.length; i += BATCH) {
      const chunk = missing.slice(i, i + BATCH);
      try {
        const found = await ctx.fhir.searchResources<Medication>(
          'Medication',
          { [param]: chunk.map(tokenOf).join(','), _count: 200 },
          { signal: ctx.signal, onTrace: ctx.onTrace, maxResults: 1000, shows: 'scan' },
        );
        for (const m of found.resources) {
          const name = medicationName(m);
          if (!name) continue;
          const carried = [...(m.identifier ?? []).map((x) => ({ system: x.system, code: x.value })), ...(m.code?.coding ?? [])];
          for (const c of carried) {
            if (!wanted.has(codeKey(c)) || names.has(codeKey(c))) continue;
            names.set(codeKey(c), name);
            if (kept.size < REFERENCE_KEPT_MAX) kept.set(codeKey(c), name);
          }
        }
      } catch {
        // Names are a nicety; the codes stay.
      }
    }
  }
}
