// The Medications whose name contains a text. No server can search a name kept in an identifier (MIMIC) or made of
// a mix's ingredients, so the catalogue is read (bounded, in large pages) and matched here. It is kept per FHIR
// server and caller (server-scoped-cache.ts), and calls that arrive while it is being read wait for that one read,
// each with its own signal (shared-read.ts).
// (Keyed on the client before, it never hit: 192 Medications cost 18 requests every call; issue 28.)
import type { Coding, Medication } from '@medplum/fhirtypes';
import { tokenOf } from './medication-code-names.ts';
import { codeKey, medicationName } from './medication-name.ts';
import { serverScoped } from '../kit/server-scoped-cache.ts';
import { sharedRead, type SharedRead } from '../kit/shared-read.ts';
import type { ToolContext } from '../kit/tool.ts';

/** At most this many Medications are read (the MIMIC-IV demo has about 1,800, with its mixes). */
const CATALOGUE_MAX = 20_000;
const PAGE = 1000;

interface Catalogue {
  /** Every Medication with its name (mixes named by their ingredients). */
  named: Array<{ medication: Medication; name: string }>;
  complete: boolean;
}

const catalogueOf = serverScoped<{ reading?: SharedRead<Catalogue> }>(() => ({}));

export const fold = (s: string) =>
  s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();

function readCatalogue(ctx: ToolContext): Promise<Catalogue> {
  const slot = catalogueOf(ctx);
  if (!slot.reading || slot.reading.abandoned) {
    // Under its own signal: a caller that aborts stops waiting, not the read others wait on (shared-read.ts).
    const reading = sharedRead((signal) => fetchCatalogue({ ...ctx, signal }));
    slot.reading = reading;
    reading.settled.catch(() => {
      if (slot.reading === reading) slot.reading = undefined;
    });
  }
  return slot.reading.join(ctx.signal);
}

async function fetchCatalogue(ctx: ToolContext): Promise<Catalogue> {
  // Matched here, never shown as such: audited as the query and how many were read.
  const found = await ctx.fhir.searchResources<Medication>(
    'Medication',
    { _count: PAGE },
    { signal: ctx.signal, onTrace: ctx.onTrace, maxResults: CATALOGUE_MAX, shows: 'scan' },
  );
  const names = new Map<string, string>();
  // Plain Medications first, so a mix finds its ingredients' names.
  const ordered = [...found.resources].sort((a, b) => Number(Boolean(a.ingredient)) - Number(Boolean(b.ingredient)));
  const named: Catalogue['named'] = [];
  for (const medication of ordered) {
    const name = medicationName(medication, names);
    if (!name) continue;
    names.set(`Medication/${medication.id}`, name);
    named.push({ medication, name });
  }
  return { named, complete: !found.truncated };
}

export interface NamedMedications {
  /** `Medication/<id>` of every match. */
  references: string[];
  /** `system|code` tokens the matches carry (codings and identifiers), for orders that code the drug instead. */
  tokens: string[];
  /** `Medication/<id>` and `code:<system>|<code>` → name, for the summaries. */
  names: Map<string, string>;
  /** False when the catalogue was larger than CATALOGUE_MAX and only part of it was matched. */
  complete: boolean;
}

export async function medicationsNamed(text: string, ctx: ToolContext): Promise<NamedMedications> {
  const catalogue = await readCatalogue(ctx);
  const wanted = fold(text);
  const out: NamedMedications = { references: [], tokens: [], names: new Map(), complete: catalogue.complete };
  const tokens = new Set<string>();
  for (const { medication, name } of catalogue.named) {
    if (!fold(name).includes(wanted)) continue;
    const reference = `Medication/${medication.id}`;
    out.references.push(reference);
    out.names.set(reference, name);
    const carried: Coding[] = [
      ...(medication.code?.coding ?? []),
      ...(medication.identifier ?? []).map((i) => ({ system: i.system, code: i.value })),
    ];
    for (const c of carried) {
      if (!c.system || !c.code) continue;
      tokens.add(tokenOf(c));
      if (!out.names.has(codeKey(c))) out.names.set(codeKey(c), name);
    }
  }
  out.tokens = [...tokens];
  return out;
}
