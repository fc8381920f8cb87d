// Contract for bench suites. Each `*.bench-suite.ts` in this folder exports `run(): Promise<BenchRow[]>`.
// `npm run bench` runs every suite and prints one table. Each row compares a measurement against a
// baseline measured in the same run, so the ratio means something on any machine.
export interface BenchRow {
  suite: string;
  case: string;
  /** e.g. 'req/s', 'p50 ms', 'p99 ms', 'total ms', 'µs/step'. */
  metric: string;
  value: number;
  baselineName?: string;
  baseline?: number;
  /** value / baseline. */
  ratio?: number;
  /** The goal, in words, and whether it was met. */
  goal?: string;
  met?: boolean;
}

export interface BenchSuite {
  name: string;
  run(): Promise<BenchRow[]>;
}
