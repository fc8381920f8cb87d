// Reads a folder of FHIR data (Bundle JSON and/or bulk NDJSON, e.g. the MIMIC-IV demo on FHIR) into bundles for
// seeding the embedded server (FHIR_SEED_DIR, `npm start -- --ehr <dir>`, `npm run eval -- run --ehr <dir>`).
// The in-memory store keeps source ids and needs no load order; anything unreadable fails the start, by file.
import type { Bundle, BundleEntry } from '@medplum/fhirtypes';
import { planLoadFiles } from './plan-load-files.ts';
import { readFileChunks } from './read-file-chunks.ts';

const NDJSON_PER_BUNDLE = 10_000;
const MAX_PROBLEMS_LISTED = 5;

export class EhrDirectoryError extends Error {}

export async function readEhrBundles(dir: string): Promise<Bundle[]> {
  const plan = await planLoadFiles([dir]);
  const problems = plan.errors.map((e) => `${e.file}: ${e.message}`);
  const bundles: Bundle[] = [];
  for (const file of plan.phases.flat()) {
    try {
      for await (const chunk of readFileChunks(file, NDJSON_PER_BUNDLE)) {
        const entry: BundleEntry[] = [];
        for (const raw of chunk.entries) {
          if (raw.error) problems.push(`${file.path} entry ${raw.index}: ${raw.error}`);
          else entry.push({ fullUrl: raw.fullUrl, resource: raw.resource, request: raw.request } as BundleEntry);
        }
        bundles.push({ resourceType: 'Bundle', type: file.kind === 'ndjson' ? 'collection' : chunk.mode, entry });
      }
    } catch (error) {
      problems.push(`${file.path}: ${(error as Error).message}`);
    }
  }
  if (problems.length) {
    const more = problems.length > MAX_PROBLEMS_LISTED ? ` (and ${problems.length - MAX_PROBLEMS_LISTED} more)` : '';
    throw new EhrDirectoryError(`cannot seed from ${dir}: ${problems.slice(0, MAX_PROBLEMS_LISTED).join('; ')}${more}`);
  }
  if (bundles.every((b) => !b.entry?.length)) throw new EhrDirectoryError(`cannot seed from ${dir}: no FHIR resources found`);
  return bundles;
}
