// Names for what search results point at (Medication, Location, Organization): a model cannot read
// `Medication/<uuid>`. They come from the search's own `_include` entries where the server honours `_include`,
// and otherwise from one batched `_id` search per type. Looking names up is a nicety: when it fails the results
// keep their references and the tool still answers.
import type { Medication, Resource } from '@medplum/fhirtypes';
import { collectReferences } from '../../vocabulary/fhir/collect-references.ts';
import type { SearchResult } from '../../fhir/client/fhir-client.ts';
import { medicationCodeNames, REFERENCE_KEPT_MAX } from './medication-code-names.ts';
import { medicationName, type ReferenceNames } from './medication-name.ts';
import { serverScoped } from '../kit/server-scoped-cache.ts';
import type { ToolContext } from '../kit/tool.ts';

export type { ReferenceNames } from './medication-name.ts';

const BATCH = 100;
const keyOf = (r: Resource) => `${r.resourceType}/${r.id}`;
/** Types no patient owns, read by id to name them: kept per server and caller across calls (server-scoped-cache.ts). */
const SHARED = new Set(['Medication', 'Location', 'Organization']);
const keptOf = serverScoped(() => new Map<string, Resource>());

/** Every `Type/id` reference of one of `types` anywhere in the resources (relative or absolute URLs). */
function referencesTo(resources: unknown[], types: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  for (const ref of collectReferences(resources)) {
    const m = /(?:^|\/)([A-Z][A-Za-z]+)\/([A-Za-z0-9\-.]{1,64})$/.exec(ref);
    if (m && types.has(m[1])) out.add(`${m[1]}/${m[2]}`);
  }
  return out;
}

function nameOf(r: Resource, names: ReferenceNames): string | undefined {
  switch (r.resourceType) {
    case 'Medication':
      return medicationName(r, names);
    case 'Location':
    case 'Organization':
      return r.name;
    default:
      return undefined;
  }
}

/** `Type/id` references grouped by type (first seen first), in chunks of at most `size` ids: one `_id` search each. */
export function idChunks(refs: Iterable<string>, size: number): Array<{ type: string; ids: string[] }> {
  const byType = new Map<string, string[]>();
  for (const ref of refs) {
    const [type, id] = ref.split('/');
    const ids = byType.get(type);
    if (ids) ids.push(id);
    else byType.set(type, [id]);
  }
  const chunks: Array<{ type: string; ids: string[] }> = [];
  for (const [type, ids] of byType) for (let i = 0; i < ids.length; i += size) chunks.push({ type, ids: ids.slice(i, i + size) });
  return chunks;
}

async function readMissing(wanted: Set<string>, known: Map<string, Resource>, ctx: ToolContext): Promise<void> {
  const kept = keptOf(ctx);
  for (const ref of wanted) {
    const r = kept.get(ref);
    if (r && !known.has(ref)) known.set(ref, r);
  }
  const missing = [...wanted].filter((ref) => !known.has(ref));
  for (const { type, ids } of idChunks(missing, BATCH)) {
    try {
      const found = await ctx.fhir.searchResources(
        type,
        { _id: ids.join(','), _count: ids.length },
        // Reference data read to name what is shown: counted in the audit, not listed.
        { signal: ctx.signal, onTrace: ctx.onTrace, maxResults: ids.length, shows: 'scan' },
      );
      for (const r of found.resources) {
        known.set(keyOf(r), r);
        if (SHARED.has(r.resourceType) && kept.size < REFERENCE_KEPT_MAX) kept.set(keyOf(r), r);
      }
    } catch {
      // Names are a nicety; the references stay.
    }
  }
}

/** Names for the references of `types` in a search's results (Medication mixes: their ingredients too). */
export async function referenceNames(result: SearchResult, types: readonly string[], ctx: ToolContext): Promise<ReferenceNames> {
  const typeSet = new Set(types);
  const known = new Map<string, Resource>((result.included ?? []).map((r) => [keyOf(r), r]));
  await readMissing(referencesTo(result.resources, typeSet), known, ctx);
  // A mix names itself by its ingredients, which are Medications too: one more round for those.
  if (typeSet.has('Medication'))
    await readMissing(
      referencesTo(
        [...known.values()].filter((r) => r.resourceType === 'Medication'),
        typeSet,
      ),
      known,
      ctx,
    );
  const names = new Map<string, string>();
  // Ingredients first, so a mix finds their names.
  const ordered = [...known.values()].sort(
    (a, b) => Number(Boolean((a as Medication).ingredient)) - Number(Boolean((b as Medication).ingredient)),
  );
  for (const r of ordered) {
    const name = nameOf(r, names);
    if (name) names.set(keyOf(r), name);
  }
  if (typeSet.has('Medication')) await medicationCodeNames(result.resources, names, ctx);
  return names;
}
