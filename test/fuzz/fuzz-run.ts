// Runs one fuzz target with fast-check (fixed seed unless FUZZ_SEED, case count from FUZZ_RUNS) and keeps the
// figures: cases, answers by status, 500s, crashes, hangs, slowest answer.
import fc from 'fast-check';

/** Per-request hang guard: an answer must be complete within this. */
export const HANG_MS = 5000;

export interface FuzzSettings {
  seed: number;
  /** Cases across all targets. */
  runs: number;
}

export function fuzzSettings(env: NodeJS.ProcessEnv = process.env): FuzzSettings {
  const seed = env.FUZZ_SEED ? Number(env.FUZZ_SEED) : 20_240_512;
  const runs = env.FUZZ_RUNS ? Number(env.FUZZ_RUNS) : 5000;
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got ${env.FUZZ_SEED}`);
  if (!Number.isSafeInteger(runs) || runs < 1) throw new Error(`FUZZ_RUNS must be a positive integer, got ${env.FUZZ_RUNS}`);
  return { seed, runs };
}

export interface Outcome {
  /** HTTP status, or a label such as `tool:fhir_error`. */
  label: string;
  ms: number;
  /** What breaks the contract; the case fails. */
  problem?: string;
  /** A known bug this case hit (reported, not failed; see the matching it.fails test). */
  known?: string;
}

export class FuzzStats {
  cases = 0;
  readonly labels = new Map<string, number>();
  readonly known = new Map<string, number>();
  serverErrors = 0;
  crashes = 0;
  hangs = 0;
  failures = 0;
  maxMs = 0;

  constructor(readonly target: string) {}

  record(o: Outcome): void {
    this.cases++;
    this.labels.set(o.label, (this.labels.get(o.label) ?? 0) + 1);
    this.maxMs = Math.max(this.maxMs, o.ms);
    if (o.label === '500') this.serverErrors++;
    if (o.label === 'crash') this.crashes++;
    if (o.label === 'hang') this.hangs++;
    if (o.known) this.known.set(o.known, (this.known.get(o.known) ?? 0) + 1);
    if (o.problem && !o.known) this.failures++;
  }

  summary(): string {
    const labels = [...this.labels]
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k}×${v}`)
      .join(' ');
    const known = this.known.size ? ` known: ${[...this.known].map(([k, v]) => `${k}×${v}`).join(' ')}` : '';
    return `${this.target}: ${this.cases} cases, 500s ${this.serverErrors}, crashes ${this.crashes}, hangs ${this.hangs}, max ${Math.round(this.maxMs)} ms [${labels}]${known}`;
  }
}

/** Runs `exercise` on `runs` generated cases; any problem fails with fast-check's shrunk counterexample and seed. */
export async function fuzzTarget<T>(o: {
  stats: FuzzStats;
  arbitrary: fc.Arbitrary<T>;
  runs: number;
  seed: number;
  exercise: (c: T) => Promise<Outcome>;
}): Promise<void> {
  // Long runs say how far they got, every tenth of the way (shrinking after a failure adds cases past `runs`).
  const every = o.runs >= 20_000 ? Math.ceil(o.runs / 10) : Infinity;
  await fc.assert(
    fc.asyncProperty(o.arbitrary, async (c) => {
      const outcome = await o.exercise(c);
      o.stats.record(outcome);
      if (o.stats.cases % every === 0) console.log(`fuzz progress: ${o.stats.summary()}`);
      if (outcome.problem && !outcome.known) throw new Error(`${outcome.label}: ${outcome.problem}`);
    }),
    { seed: o.seed, numRuns: o.runs, endOnFailure: false, maxSkipsPerRun: 0 },
  );
}

export interface TimedAnswer {
  status: number;
  contentType: string;
  text: string;
  headers: Headers;
  ms: number;
}

/** fetch with the hang guard over the whole answer, body included. Network failures and hangs are outcomes. */
export async function timedFetch(url: string, init: RequestInit): Promise<TimedAnswer | Outcome> {
  const started = performance.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(HANG_MS) });
    const text = await res.text();
    return {
      status: res.status,
      contentType: res.headers.get('content-type') ?? '',
      text,
      headers: res.headers,
      ms: performance.now() - started,
    };
  } catch (err) {
    const ms = performance.now() - started;
    const e = err as Error & { cause?: unknown };
    if (e.name === 'TimeoutError') return { label: 'hang', ms, problem: `no complete answer within ${HANG_MS} ms` };
    return { label: 'crash', ms, problem: `connection failed: ${e.message} ${String(e.cause ?? '')}` };
  }
}

export const isOutcome = (a: TimedAnswer | Outcome): a is Outcome => 'label' in a;

/** Resolves with the promise, or with `undefined` once the hang guard passes. */
export async function withinHangGuard<T>(p: Promise<T>): Promise<{ value: T } | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), HANG_MS)));
  try {
    return await Promise.race([p.then((value) => ({ value })), guard]);
  } finally {
    clearTimeout(timer);
  }
}
