// find_codes: the codings a server's own data uses for a type whose name matches a text, with how many resources
// carry each, so the agent can search by exact code on any server, MIMIC's own code systems included. Servers
// rarely hold the ValueSets of their data, so it reads the data: first the resources whose concept's text starts
// with the text (`:text`), and when none do, the newest resources of the type (bounded), matched here anywhere in
// the name. Drugs also come from the Medication catalogue, where MIMIC keeps names as identifiers.
import type { CodeableConcept, Resource } from '@medplum/fhirtypes';
import { z } from 'zod';
import type { SearchParams } from '../../fhir/client/fhir-client.ts';
import { conceptName, isNameSystem } from '../medication/medication-name.ts';
import { fold, medicationsNamed } from '../medication/medications-named.ts';
import { expectedToolFailure } from '../kit/tool-error-result.ts';
import { defineTool, type ToolContext } from '../kit/tool.ts';

/** A type's coded concept (its field) and the search parameter over it. */
const at = (field: string, param = 'code') => ({
  param,
  of: (r: Resource) => [(r as unknown as Record<string, CodeableConcept | undefined>)[field]],
});
const drug = at('medicationCodeableConcept');
const CONCEPTS = {
  Observation: at('code'),
  Condition: at('code'),
  Procedure: at('code'),
  DiagnosticReport: at('code'),
  AllergyIntolerance: at('code'),
  Immunization: at('vaccineCode', 'vaccine-code'),
  Specimen: at('type', 'type'),
  MedicationRequest: drug,
  MedicationAdministration: drug,
  MedicationDispense: drug,
  MedicationStatement: drug,
  Medication: at('code'),
};

const TYPES = Object.keys(CONCEPTS) as Array<keyof typeof CONCEPTS>;
/** Resources read at most per call: enough to see a site's vocabulary, bounded so a call stays quick. */
const SCAN = 3000;
const PAGE = 1000;
const MAX_CODES = 40;

interface Found {
  system?: string;
  code: string;
  display?: string;
  resources: number;
  /** Found in the Medication catalogue rather than on records of the type asked for. */
  in?: 'Medication';
}

function tally(
  resources: Resource[],
  of: (r: Resource) => Array<CodeableConcept | undefined>,
  wanted: string,
  into: Map<string, Found>,
): void {
  for (const r of resources) {
    for (const cc of of(r)) {
      if (!cc) continue;
      const name = conceptName(cc);
      for (const c of cc.coding ?? []) {
        if (!c.code) continue;
        const display = c.display ?? (isNameSystem(c.system) ? c.code : name);
        if (!fold(`${display ?? ''} ${cc.text ?? ''}`).includes(wanted)) continue;
        const key = `${c.system ?? ''}|${c.code}`;
        const f = into.get(key) ?? { system: c.system, code: c.code, display, resources: 0 };
        f.resources++;
        into.set(key, f);
      }
    }
  }
}

async function scan(type: keyof typeof CONCEPTS, params: SearchParams, ctx: ToolContext) {
  // Counted here, never shown: audited as the query and how many were read.
  return ctx.fhir.searchResources(
    type,
    { ...params, _count: PAGE },
    { signal: ctx.signal, onTrace: ctx.onTrace, maxResults: SCAN, shows: 'scan' },
  );
}

export const findCodes = defineTool({
  name: 'find_codes',
  description:
    "Find the codes this server's own data uses for a kind of record, by name: e.g. the LOINC or local lab code for " +
    '"potassium", a microbiology test, or a drug. Returns each coding (system, code, display) with how many records ' +
    'carry it; then search by that exact code ("system|code").',
  inputSchema: z.object({
    resourceType: z.enum(TYPES).describe('The kind of record, e.g. Observation for labs and vital signs'),
    text: z.string().min(2).max(100).describe('Name or part of it, any case, e.g. "potassium"'),
  }),
  write: false,
  async execute(input, ctx) {
    const spec = CONCEPTS[input.resourceType];
    const wanted = fold(input.text);
    const found = new Map<string, Found>();
    try {
      let result = await scan(input.resourceType, { [`${spec.param}:text`]: input.text }, ctx);
      let how = `records whose ${spec.param} name starts with the text`;
      if (result.resources.length === 0) {
        result = await scan(input.resourceType, { _sort: '-_lastUpdated' }, ctx);
        how = `the newest ${result.resources.length} records, matched anywhere in the name`;
      }
      tally(result.resources, spec.of, wanted, found);
      if (input.resourceType.startsWith('Medication')) {
        // Drug names kept as Medication identifiers (MIMIC): the catalogue's codes under the name; orders reference
        // these Medications (search their orders by name), administrations carry their formulary codes.
        const named = await medicationsNamed(input.text, ctx).catch(() => undefined);
        for (const [key, name] of named?.names ?? []) {
          if (!key.startsWith('code:')) continue;
          const [system, code] = splitToken(key.slice(5));
          if (!found.has(`${system}|${code}`))
            found.set(`${system}|${code}`, { system, code, display: name, resources: 0, in: 'Medication' });
        }
      }
      const codings = [...found.values()].sort((a, b) => b.resources - a.resources).slice(0, MAX_CODES);
      return {
        ok: true,
        content: {
          resourceType: input.resourceType,
          text: input.text,
          codings: codings.map((c) => ({
            code: c.system ? `${c.system}|${c.code}` : c.code,
            display: c.display,
            ...(c.in ? { in: c.in } : { resources: c.resources }),
          })),
          note:
            `Counted over ${how}${result.truncated ? ` (more exist; counts are of the ${SCAN} read)` : ''}.` +
            (found.size > MAX_CODES ? ` ${found.size - MAX_CODES} more codes matched; use a longer text.` : ''),
        },
      };
    } catch (err) {
      return expectedToolFailure(err, ctx);
    }
  },
});

const splitToken = (token: string): [string, string] => {
  const at = token.indexOf('|');
  return [token.slice(0, at), token.slice(at + 1)];
};
