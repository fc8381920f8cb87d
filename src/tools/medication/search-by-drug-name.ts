// Every order (administration, dispense, statement) of a drug named by part of its name, across pages. Servers
// cannot search a referenced Medication's name, so: the Medications named so first (medications-named.ts), then the
// patient's resources that reference them or carry one of their codes, then those whose own concept's text matches
// (`code:text`), and last the newest ones matched here by the names the summaries show, for drugs coded in ways
// the catalogue does not know. The union is sorted as the tool sorts and filtered by name once more.
import type { Resource } from '@medplum/fhirtypes';
import type { SearchParams, SearchResult } from '../../fhir/client/fhir-client.ts';
import { medicationsNamed, fold } from './medications-named.ts';
import { referenceNames, type ReferenceNames } from './reference-names.ts';
import type { ToolContext } from '../kit/tool.ts';

/** Values per OR-ed search parameter: keeps a URL well under the 8 KB servers accept. */
const CHUNK = 40;
/** Matches gathered at most; past it the result says so. */
const NAME_MATCH_MAX = 5000;
/** The newest resources matched locally, for drugs the catalogue does not name. */
const LOCAL_SCAN = 1000;
const PAGE = 500;

export interface DrugNameSearch {
  resourceType: string;
  /** The tool's own parameters (patient, status, dates…), without paging. */
  params: SearchParams;
  include?: SearchParams[string];
  iterate?: SearchParams[string];
  text: string;
  nameOf: (r: Resource, names: ReferenceNames) => string | undefined;
  /** Newest first, as the tool's `_sort`, with the id breaking ties. */
  dateOf: (r: Resource) => string | undefined;
}

/** Undated last, as servers sort them. */
const time = (d: string | undefined) => (d ? Date.parse(d) || 0 : -Infinity);

const chunks = <T>(xs: T[]) => Array.from({ length: Math.ceil(xs.length / CHUNK) }, (_, i) => xs.slice(i * CHUNK, (i + 1) * CHUNK));

export async function searchByDrugName(
  s: DrugNameSearch,
  ctx: ToolContext,
): Promise<{ result: SearchResult; names: ReferenceNames; note?: string; read: number }> {
  const named = await medicationsNamed(s.text, ctx).catch(() => undefined);
  const found = new Map<string, Resource>();
  const included = new Map<string, Resource>();
  let pages = 0;
  let read = 0;
  let capped = false;
  const run = async (extra: SearchParams, max = NAME_MATCH_MAX) => {
    const r = await ctx.fhir.searchResources(
      s.resourceType,
      {
        ...s.params,
        ...extra,
        ...(s.include ? { _include: s.include } : {}),
        ...(s.iterate ? { '_include:iterate': s.iterate } : {}),
        _count: PAGE,
      },
      // Matched here by name: the audit records the query and counts; the tool records what it shows of them.
      { signal: ctx.signal, onTrace: ctx.onTrace, maxResults: max, shows: 'scan' },
    );
    pages += r.pages;
    read += r.resources.length + (r.included?.length ?? 0);
    if (r.truncated && max === NAME_MATCH_MAX) capped = true;
    for (const x of r.resources) found.set(x.id ?? '', x);
    for (const x of r.included ?? []) included.set(`${x.resourceType}/${x.id}`, x);
  };
  for (const refs of chunks(named?.references ?? [])) await run({ medication: refs.join(',') });
  for (const tokens of chunks(named?.tokens ?? [])) await run({ code: tokens.join(',') });
  await run({ 'code:text': s.text });
  await run({}, LOCAL_SCAN);

  const all = [...found.values()];
  const resolved = await referenceNames({ resources: all, included: [...included.values()], truncated: false, pages }, ['Medication'], ctx);
  const names = new Map([...(named?.names ?? []), ...resolved]);
  const wanted = fold(s.text);
  const kept = all
    .filter((r) => fold(s.nameOf(r, names) ?? '').includes(wanted))
    .sort((a, b) => time(s.dateOf(b)) - time(s.dateOf(a)) || (a.id ?? '').localeCompare(b.id ?? ''));
  const notes = [
    named?.complete === false ? 'The Medication catalogue was larger than could be read; drugs named only there may be missing.' : '',
    named ? '' : 'Medications could not be searched; only the newest orders were matched by name.',
    capped ? `More than ${NAME_MATCH_MAX} matched; narrow the dates.` : '',
  ].filter(Boolean);
  return {
    result: { resources: kept, total: capped ? undefined : kept.length, truncated: capped, pages, included: [...included.values()] },
    names,
    note: notes.length ? notes.join(' ') : undefined,
    read,
  };
}
