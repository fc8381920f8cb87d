// Opt-in: the look-alike MIMIC generator (fixtures/mimic) checked field by field against real records of the
// MIMIC-IV demo on FHIR, read at run time from ../shared/data/mimic-demo-sample (or MIMIC_SAMPLE_DIR). Only field
// paths and code-system names are compared and reported; no value of the real data is read into an assertion,
// a message or the repository. Skips, saying why, when the folder is absent.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateMimicDemo } from '../fixtures/mimic/generate-mimic-demo.ts';
import { shapePaths } from './support/shape-paths.ts';

const dir = process.env.MIMIC_SAMPLE_DIR ?? path.resolve(import.meta.dirname, '../../shared/data/mimic-demo-sample');
const present = existsSync(dir) && readdirSync(dir).some((f) => f.endsWith('.ndjson'));
if (!present)
  console.warn(`[mimic real shapes] skipped: no Mimic*.ndjson in ${dir} (set MIMIC_SAMPLE_DIR; the real data is not in the repository)`);

/** Fields the generator writes that the sample's few records happen not to show, each in the full demo. */
const EXTRA_ALLOWED: Record<string, RegExp> = {
  // Admissions after 2015 are coded in ICD-10, earlier ones in ICD-9.
  MimicCondition: /^\.code\.coding\[\]\.system=mimic-diagnosis-icd10$/,
};

describe.skipIf(!present)('look-alike MIMIC data has the real shapes (opt-in, reads ../shared)', () => {
  const generated = generateMimicDemo({ patients: 8 });
  const files = present ? readdirSync(dir).filter((f) => f.endsWith('.ndjson')) : [];

  it.each(files)('%s: every real field path, and no field the real data lacks', (file) => {
    const key = file.replace(/\.ndjson$/, '');
    const real = shapePaths(
      readFileSync(path.join(dir, file), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as unknown),
    );
    const ours = shapePaths(generated.get(`${key}.ndjson.gz`) ?? []);
    const missing = [...real].filter((p) => !ours.has(p) && !p.startsWith('.meta'));
    const allowed = EXTRA_ALLOWED[key];
    const extra = [...ours].filter((p) => !real.has(p) && !p.startsWith('.meta') && !(allowed && allowed.test(p)));
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
  });
});
