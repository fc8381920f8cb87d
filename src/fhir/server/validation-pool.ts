// Validates many resources at once on worker threads, so a bulk load keeps every core busy while the main thread
// writes to the store. One pool per process (the workers hold Medplum's schema, ~1 s to index each), started on
// first use and unref'd so it never keeps a process alive. Small requests are validated in line: a round trip to a
// worker costs more than validating a handful of resources.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { OperationOutcome, Resource } from '@medplum/fhirtypes';
import { verdictOf } from './resource-verdict.mjs';

/** Per resource: undefined when valid, else why not. */
export type Verdicts = (OperationOutcome | undefined)[];

const INLINE_BELOW = 32;

interface PooledWorker {
  worker: Worker;
  ready: Promise<void>;
  pending: Map<number, { resolve: (verdicts: Verdicts) => void; reject: (error: Error) => void }>;
  busy: number;
}

let workers: PooledWorker[] | undefined;
let nextId = 0;

function validateInline(resources: readonly Resource[]): Verdicts {
  return resources.map(verdictOf);
}

function startWorker(): PooledWorker {
  // A larger young generation: validation allocates many short-lived objects, and the default one spent ~10% in GC.
  const worker = new Worker(new URL('./validation-worker.mjs', import.meta.url), { resourceLimits: { maxYoungGenerationSizeMb: 96 } });
  const pending: PooledWorker['pending'] = new Map();
  const ready = new Promise<void>((resolve, reject) => {
    const fail = (error: Error) => {
      reject(error);
      for (const p of pending.values()) p.reject(error);
      pending.clear();
    };
    worker.on('message', (msg: { ready?: true; id?: number; verdicts?: (OperationOutcome | null)[] }) => {
      if (msg.ready) return resolve();
      const p = pending.get(msg.id!);
      pending.delete(msg.id!);
      p?.resolve(msg.verdicts!.map((v) => v ?? undefined));
    });
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`validation worker exited with code ${code}`)));
  });
  ready.catch(() => undefined);
  // After the listeners: adding a 'message' listener refs the worker again.
  worker.unref();
  return { worker, ready, pending, busy: 0 };
}

/** Workers in the pool: EMBEDDED_VALIDATION_WORKERS, else one per core. 0 validates in line. */
function poolSize(): number {
  const configured = Number(process.env.EMBEDDED_VALIDATION_WORKERS);
  return Number.isInteger(configured) && configured >= 0 ? Math.min(configured, 16) : Math.min(availableParallelism(), 8);
}

async function onWorker(pooled: PooledWorker, resources: readonly Resource[]): Promise<Verdicts> {
  // Referenced only while it owes an answer: an idle pool never keeps the process alive.
  pooled.busy++;
  pooled.worker.ref();
  try {
    await pooled.ready;
    const id = nextId++;
    return await new Promise<Verdicts>((resolve, reject) => {
      pooled.pending.set(id, { resolve, reject });
      pooled.worker.postMessage({ id, resources });
    });
  } finally {
    if (--pooled.busy === 0) pooled.worker.unref();
  }
}

/** Medplum's validateResource on each resource, over the pool; in line if a worker fails. */
export async function validateResources(resources: readonly Resource[]): Promise<Verdicts> {
  const size = resources.length < INLINE_BELOW ? 0 : poolSize();
  if (size === 0) return validateInline(resources);
  workers ??= Array.from({ length: size }, startWorker);
  if (workers.length === 0) return validateInline(resources);
  const per = Math.ceil(resources.length / workers.length);
  const slices = workers.map((w, i) => ({ w, part: resources.slice(i * per, (i + 1) * per) })).filter((s) => s.part.length);
  try {
    return (await Promise.all(slices.map(({ w, part }) => onWorker(w, part)))).flat();
  } catch {
    // A worker that cannot start (e.g. a missing module) must not stop writes: validate here instead.
    for (const w of workers) void w.worker.terminate();
    workers = [];
    return validateInline(resources);
  }
}
