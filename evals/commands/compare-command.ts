// `eval compare A B [--max-regression PP] [--allow-different-datasets]`: the paired comparison on stdout; exit 3
// when the lower bound of B − A is below −PP points (B may have regressed by more than PP).
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { compareRuns, datasetMismatch } from '../report/compare-runs.ts';
import { loadRun } from '../report/merge-logs.ts';
import { EXIT, UsageError } from './run-command.ts';

const CompareArgsSchema = z.object({
  logs: z.array(z.string()).length(2, 'eval compare needs two logs'),
  maxRegression: z.coerce.number().min(0).max(100).optional(),
  allowDifferentDatasets: z.boolean().default(false),
});

export async function compareCommand(argv: string[], out: { write(s: string): unknown }): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { 'max-regression': { type: 'string' }, 'allow-different-datasets': { type: 'boolean' } },
  });
  const parsed = CompareArgsSchema.safeParse({
    logs: positionals,
    maxRegression: values['max-regression'],
    allowDifferentDatasets: values['allow-different-datasets'],
  });
  if (!parsed.success)
    throw new UsageError(parsed.error.issues.map((i) => `${i.path.length ? `--${i.path.join('.')}: ` : ''}${i.message}`).join('; '));
  const [pathA, pathB] = parsed.data.logs as [string, string];
  for (const p of [pathA, pathB]) if (!existsSync(p)) throw new UsageError(`${p}: no such log`);
  const [a, b] = await Promise.all([loadRun([pathA]), loadRun([pathB])]);
  for (const [p, run] of [
    [pathA, a],
    [pathB, b],
  ] as const)
    if (!run.header && !run.samples.length) throw new UsageError(`${p}: not an eval log (no header, no samples)`);
  const mismatch = datasetMismatch(a, b);
  if (mismatch && !parsed.data.allowDifferentDatasets) throw new UsageError(mismatch);
  const cmp = compareRuns(a, b, [pathA, pathB]);
  out.write(cmp.markdown);
  const limit = parsed.data.maxRegression;
  if (limit !== undefined && cmp.overall.low * 100 < -limit) {
    out.write(
      `regression gate: B − A could be as low as ${(100 * cmp.overall.low).toFixed(1)} points, below −${limit} (--max-regression)\n`,
    );
    return EXIT.belowMinPassRate;
  }
  return EXIT.ok;
}
