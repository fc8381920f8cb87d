// Which files to load and in which order: Synthea's shared-resource bundles before what points at them; NDJSON files
// together, since the order among their resources comes from their references (plan-resource-order.ts).
import { readdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { LoadError } from './load-report.ts';

export interface PlannedFile {
  path: string;
  kind: 'bundle' | 'ndjson';
  gzip: boolean;
  size: number;
  rank: number;
}

export interface LoadPlan {
  /**
   * Files grouped by rank; each group loads after the previous one finished. Bundles are ranked by name (Synthea's
   * shared-resource bundles first); all NDJSON files form one group, ordered inside by their references.
   */
  phases: PlannedFile[][];
  errors: LoadError[];
}

const LOADABLE = /\.(json|ndjson|jsonl)(\.gz)?$/i;

/** After Synthea's hospital and practitioner bundles, before its patient bundles. */
const NDJSON_RANK = 4;
const PATIENT_BUNDLE_RANK = 5;

function rankFile(path: string, kind: PlannedFile['kind']): number {
  const name = basename(path);
  if (kind === 'bundle') {
    // Synthea writes these beside the patient bundles; patients point into them with conditional references.
    if (/^hospitalInformation/i.test(name)) return 0;
    if (/^practitionerInformation/i.test(name)) return 2;
    return PATIENT_BUNDLE_RANK;
  }
  return NDJSON_RANK;
}

function kindOf(path: string): Pick<PlannedFile, 'kind' | 'gzip'> {
  const lower = path.toLowerCase();
  const gzip = lower.endsWith('.gz');
  const bare = gzip ? lower.slice(0, -3) : lower;
  return { kind: bare.endsWith('.ndjson') || bare.endsWith('.jsonl') ? 'ndjson' : 'bundle', gzip };
}

async function expand(path: string, explicit: boolean, out: string[], errors: LoadError[]): Promise<void> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    errors.push({ file: path, entryIndex: -1, message: `cannot read: ${(error as Error).message}` });
    return;
  }
  if (info.isDirectory()) {
    const names = (await readdir(path)).sort();
    for (const name of names) {
      if (name.startsWith('.')) continue;
      await expand(join(path, name), false, out, errors);
    }
  } else if (explicit || LOADABLE.test(path)) {
    out.push(path);
  }
}

export async function planLoadFiles(paths: string[]): Promise<LoadPlan> {
  const errors: LoadError[] = [];
  const found: string[] = [];
  for (const p of paths) await expand(p, true, found, errors);
  const seen = new Set<string>();
  const files: PlannedFile[] = [];
  for (const path of found) {
    const key = resolve(path);
    if (seen.has(key)) continue;
    seen.add(key);
    const { kind, gzip } = kindOf(path);
    const size = (await stat(path)).size;
    files.push({ path, kind, gzip, size, rank: rankFile(path, kind) });
  }
  const ranks = [...new Set(files.map((f) => f.rank))].sort((a, b) => a - b);
  return { phases: ranks.map((r) => files.filter((f) => f.rank === r)), errors };
}
