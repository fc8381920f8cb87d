// Retrieval recall and precision by FHIR-AgentBench's own definitions (glee4810/FHIR-AgentBench: utils/metrics_utils.py
// and evaluation_metrics.py's calculate_retrieval_metrics), re-implemented, not copied. The inputs have the shapes the
// benchmark reads: the agent's ids and the gold ids, each a dict from resource type to ids. As there:
// - only the agent's ids filed under a gold resource type count (concatenated in the gold dict's order, repeats kept,
//   so a repeated id weighs twice in precision), and ids are compared bare, whatever type they came under;
// - recall is binary (every gold id among them), precision continuous (share of them that are gold);
// - no gold and nothing counted: recall 1, precision 1; gold but nothing counted: recall 0, precision undefined;
//   nothing gold but something counted (possible only when a gold type lists no ids): recall undefined, precision 0.
// Undefined is the benchmark's NaN, `null` here so it survives JSON; means leave it out, as pandas' mean does.

export type IdsByType = Readonly<Record<string, readonly string[]>>;

export interface BenchmarkRetrieval {
  /** 1 or 0; null where the benchmark's recall is NaN. */
  recall: number | null;
  /** In [0, 1]; null where the benchmark's precision is NaN. */
  precision: number | null;
  /** The agent's ids the metric counted (those under the gold types, repeats kept) and the gold ids. */
  counted: number;
  gold: number;
}

export function benchmarkRetrieval(agent: IdsByType, gold: IdsByType): BenchmarkRetrieval {
  const counted = Object.keys(gold).flatMap((type) => agent[type] ?? []);
  const goldIds = Object.values(gold).flat();
  const measures = { counted: counted.length, gold: goldIds.length };
  if (!goldIds.length) return { recall: counted.length ? null : 1, precision: counted.length ? 0 : 1, ...measures };
  if (!counted.length) return { recall: 0, precision: null, ...measures };
  const countedSet = new Set(counted);
  const goldSet = new Set(goldIds);
  return {
    recall: goldIds.every((id) => countedSet.has(id)) ? 1 : 0,
    precision: counted.filter((id) => goldSet.has(id)).length / counted.length,
    ...measures,
  };
}

/** The mean of the defined values (the benchmark's pandas mean skips NaN); null when none is defined. */
export function meanOfDefined(values: ReadonlyArray<number | null | undefined>): number | null {
  const defined = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  return defined.length ? defined.reduce((a, b) => a + b, 0) / defined.length : null;
}

/** `Type/id` references grouped the way the benchmark's `agent_fhir_resources` holds them: type → ids, sorted. */
export function idsByType(references: Iterable<string>): Record<string, string[]> {
  const out: Record<string, Set<string>> = {};
  for (const ref of references) {
    const slash = ref.indexOf('/');
    if (slash <= 0 || slash === ref.length - 1) continue;
    (out[ref.slice(0, slash)] ??= new Set()).add(ref.slice(slash + 1));
  }
  return Object.fromEntries(
    Object.keys(out)
      .sort()
      .map((type) => [type, [...out[type]].sort()]),
  );
}
