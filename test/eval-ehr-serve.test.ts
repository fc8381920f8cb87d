// `eval ehr serve`: the task file's generated EHR over real HTTP at /fhir/ on loopback, no key, until SIGINT.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mabSeedTasks } from '../evals/medagentbench/seed-tasks.ts';

describe('eval ehr serve', () => {
  it('serves the generated EHR at the printed /fhir/ base without a key and stops on SIGINT', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ehr-serve-'));
    const tasks = mabSeedTasks();
    writeFileSync(path.join(dir, 'tasks.json'), JSON.stringify(tasks));
    const child = spawn(process.execPath, ['--import', 'tsx', 'evals/cli.ts', 'ehr', 'serve', '--tasks', path.join(dir, 'tasks.json')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let out = '';
    const base = await new Promise<string>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        const m = /FHIR base (http:\/\/127\.0\.0\.1:\d+\/fhir\/)/.exec(out);
        if (m) resolve(m[1]);
      });
      void exited.then((code) => reject(new Error(`exited ${code} before serving: ${out}`)));
    });
    try {
      const mrn = tasks[1].eval_MRN!;
      // Many requests at once: no rate limit stands in the way of another harness or refsol.py.
      const answers = await Promise.all(
        Array.from({ length: 40 }, () =>
          fetch(`${base}Patient?identifier=${mrn}&_format=json`, { headers: { accept: 'application/fhir+json' } }),
        ),
      );
      expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
      const bundle = (await answers[0].json()) as { entry: Array<{ resource: { id: string } }> };
      expect(bundle.entry.map((e) => e.resource.id)).toEqual([mrn]);
      expect(answers[0].headers.get('content-type')).toMatch(/^application\/fhir\+json/);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  }, 60_000);
});
