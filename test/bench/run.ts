// `npm run bench [-- name...]`: runs every *.bench-suite.ts here and prints one table of ratios.
import { readdir } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import type { BenchRow, BenchSuite } from './bench-row.ts';

const dir = path.dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const files = (await readdir(dir)).filter((f) => f.endsWith('.bench-suite.ts')).sort();

const fmt = (n: number | undefined, digits = 2) =>
  n === undefined || Number.isNaN(n) ? '' : Math.abs(n) >= 1000 ? Math.round(n).toString() : n.toFixed(digits);

const rows: BenchRow[] = [];
let failed = false;
for (const file of files) {
  const suite = (await import(pathToFileURL(path.join(dir, file)).href)).default as BenchSuite;
  if (only.length && !only.includes(suite.name)) continue;
  process.stderr.write(`bench: ${suite.name}…\n`);
  try {
    rows.push(...(await suite.run()));
  } catch (err) {
    failed = true;
    rows.push({ suite: suite.name, case: `failed: ${(err as Error).message}`, metric: '', value: NaN });
  }
}

const header = ['suite', 'case', 'metric', 'value', 'baseline', 'ratio', 'goal', 'met'];
const lines = rows.map((r) => [
  r.suite,
  r.case,
  r.metric,
  fmt(r.value),
  r.baselineName ? `${fmt(r.baseline)} (${r.baselineName})` : '',
  // Against a zero baseline (whole-millisecond latencies that round to 0) a ratio means nothing: the values say it.
  r.ratio === undefined || r.baseline === 0 ? '' : `${fmt(r.ratio, 3)}×`,
  r.goal ?? '',
  r.met === undefined ? '' : r.met ? 'yes' : 'no',
]);
console.log(`| ${header.join(' | ')} |`);
console.log(`|${header.map(() => '---').join('|')}|`);
for (const l of lines) console.log(`| ${l.join(' | ')} |`);
console.log(`\nnode ${process.version}, ${(await import('node:os')).cpus().length} cores, ${new Date().toISOString()}`);
process.exit(failed ? 1 : 0);
