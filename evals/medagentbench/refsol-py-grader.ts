// `--grader refsol.py` for one sample at a time, as the `refsol` score asks: the user's refsol.py grades the same
// transcript. A sample whose store has no HTTP address (a tools-mode fork) is served to python for the call through
// a loopback bridge over the score's own fetch, and the transcript's FHIR base is spelled as the bridge's.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RefsolRun, RefsolVerdict } from './refsol-grader.ts';
import { runRefsolPy } from './run-refsol-py.ts';
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

export function refsolPyGrader(opts: { dir: string; python?: string }): RefsolPyGrade {
  return async (task, run, fhirBase, get) => {
    const served = get ? await bridge(fhirBase, get) : undefined;
    try {
      const base = served?.base ?? fhirBase;
      const history = served ? run.history.map((m) => ({ ...m, content: m.content.split(fhirBase).join(base) })) : run.history;
      const [verdict] = await runRefsolPy({
        dir: opts.dir,
        fhirBase: base,
        cases: [{ task, run: { history, result: run.result } }],
        python: opts.python,
      });
      return verdict;
    } finally {
      await served?.close();
    }
  };
}
