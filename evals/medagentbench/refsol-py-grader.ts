// `--grader refsol.py` for one sample at a time, as the `refsol` score asks: the user's refsol.py grades the same
// transcript, in one python3 for the whole run. A sample whose store has no HTTP address (a tools-mode fork) is
// served to python for the call through a loopback bridge over the score's own fetch, and the transcript's FHIR
// base is spelled as the bridge's.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RefsolRun, RefsolVerdict } from './refsol-grader.ts';
import { startRefsolPy, type RefsolPyProcess } from './run-refsol-py.ts';
import type { MedAgentBenchTask } from './task-file.ts';

export type RefsolPyGrade = (
  task: MedAgentBenchTask,
  run: RefsolRun,
  fhirBase: string,
  /** Given when the store must be bridged to HTTP for python (tools mode). */
  fetch?: typeof globalThis.fetch,
) => Promise<RefsolVerdict>;

async function bridge(base: string, get: typeof globalThis.fetch): Promise<{ base: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const below = (req.url ?? '/').replace(/^\/fhir\//, '');
    get(`${base}${below}`)
      .then(async (r) => {
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/fhir+json' });
        res.end(Buffer.from(await r.arrayBuffer()));
      })
      .catch((err: Error) => {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(err.message);
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}/fhir/`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The grade, and close() for the run's end: one python3 grades every sample of a run (started by the first). */
export type RefsolPyGrader = RefsolPyGrade & { close(): Promise<void> };

export function refsolPyGrader(opts: { dir: string; python?: string }): RefsolPyGrader {
  let python: RefsolPyProcess | undefined;
  const grade: RefsolPyGrade = async (task, run, fhirBase, get) => {
    const served = get ? await bridge(fhirBase, get) : undefined;
    const proc = (python ??= startRefsolPy(opts));
    try {
      const base = served?.base ?? fhirBase;
      const history = served ? run.history.map((m) => ({ ...m, content: m.content.split(fhirBase).join(base) })) : run.history;
      const [verdict] = await proc.grade(base, [{ task, run: { history, result: run.result } }]);
      return verdict;
    } catch (err) {
      // A python that died is started afresh for the next sample; this one reports why.
      if (python === proc) python = undefined;
      await proc.close();
      throw err;
    } finally {
      await served?.close();
    }
  };
  return Object.assign(grade, { close: async () => python?.close() });
}
