// A log's sample record for tests that build logs by hand: a passed sample with no model calls, its metrics what
// the harness's own sampleMetrics makes of that (so a new metric field needs no test edits), anything overridden.
import type { SampleRecord } from '../../evals/eval-log.ts';
import { sampleMetrics } from '../../evals/metrics.ts';

export function sampleRecord(over: Partial<SampleRecord> = {}): SampleRecord {
  return {
    type: 'sample',
    id: 'task1_1',
    epoch: 1,
    category: 'task1',
    passed: true,
    scores: {},
    answer: null,
    rawAnswer: null,
    transcript: [],
    toolTrace: [],
    modelCalls: [],
    writes: [],
    metrics: sampleMetrics({ answer: null, rawAnswer: null, transcript: [], toolTrace: [], modelCalls: [] }, 0),
    startedAt: '2026-01-01T00:00:00Z',
    ...over,
  };
}
