// The dataset edge: every scenario is validated by these schemas on load, and all eval types are inferred from them.
import { z } from 'zod';

/** How one field of a written resource must look. A bare JSON value means deep equality. */
const FieldMatcherSchema = z.union([
  z.object({ approx: z.number(), tolerance: z.number().min(0).max(1e9) }).strict(),
  z.object({ includes: z.string(), caseInsensitive: z.boolean().optional() }).strict(),
  z.object({ instant: z.string() }).strict(),
  z.object({ prefix: z.string() }).strict(),
  z.object({ regex: z.string(), flags: z.string().optional() }).strict(),
  z.object({ oneOf: z.array(z.unknown()).min(1) }).strict(),
  z.object({ equals: z.unknown() }).strict(),
  z.union([z.string(), z.number(), z.boolean(), z.null()]),
]);
export type FieldMatcher = z.infer<typeof FieldMatcherSchema>;

const ExpectedWriteSchema = z.object({
  resourceType: z.string().min(1),
  /** Path (see json-path.ts) → matcher. Every path must have at least one matching value. */
  fields: z.record(z.string(), FieldMatcherSchema).default({}),
});
export type ExpectedWrite = z.infer<typeof ExpectedWriteSchema>;

/** Grader spec for the final answer (a FINISH-style list). */
const ExpectedAnswerSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('exact'),
    value: z.union([z.string(), z.number(), z.boolean(), z.null()]),
    caseSensitive: z.boolean().default(false),
  }),
  z.object({ kind: z.literal('numeric'), value: z.number(), tolerance: z.number().min(0).max(1e9).default(0) }),
  z.object({ kind: z.literal('set'), values: z.array(z.union([z.string(), z.number()])), ordered: z.boolean().default(false) }),
  z.object({ kind: z.literal('regex'), pattern: z.string(), flags: z.string().default('i') }),
  z.object({ kind: z.literal('json-path'), path: z.string(), matcher: FieldMatcherSchema }),
  z.object({ kind: z.literal('model-graded'), rubric: z.string(), target: z.string().optional() }),
  /** Graded by the MedAgentBench rules, with the expected answer computed from the FHIR data at grading time. */
  z.object({ kind: z.literal('medagentbench') }),
  /** Graded by the FHIR-AgentBench rubric (and judge, when configured) against the row in metadata.fhirAgentBench. */
  z.object({ kind: z.literal('fhir-agentbench') }),
  /** Action-only scenarios: any answer (including none) is fine. */
  z.object({ kind: z.literal('any') }),
]);

const TrajectorySpecSchema = z.object({
  requiredTools: z.array(z.string()).default([]),
  forbiddenTools: z.array(z.string()).default([]),
  maxSteps: z.number().int().min(1).max(1000).optional(),
});
export type TrajectorySpec = z.infer<typeof TrajectorySpecSchema>;

/** What the reference solver must do: a named recipe and its parameters (see solvers/reference-recipes.ts). */
const RecipeSchema = z.object({ kind: z.string().min(1), params: z.record(z.string(), z.unknown()).default({}) });

export const ScenarioSchema = z.object({
  id: z.string().min(1),
  category: z.string().min(1),
  /** Patient ids (= MRNs) the scenario concerns; also scopes write detection and cleanup. */
  patients: z.array(z.string()).default([]),
  instruction: z.string().min(1),
  context: z.object({
    /** The pinned "now" (ISO 8601 with offset); tools and graders use this clock. */
    now: z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'not an ISO date-time'),
    text: z.string().default(''),
  }),
  expected: ExpectedAnswerSchema.default({ kind: 'any' }),
  /** Exactly these writes must happen (no more); [] with expectsWrites=false means nothing may be written. */
  expectedWrites: z.array(ExpectedWriteSchema).optional(),
  expectsWrites: z.boolean(),
  /** Tool names offered to the model; all tools when omitted. */
  allowedTools: z.array(z.string()).optional(),
  trajectory: TrajectorySpecSchema.optional(),
  recipe: RecipeSchema.optional(),
  metadata: z.record(z.string(), z.unknown()).default({}),
});
export type Scenario = z.infer<typeof ScenarioSchema>;
export type ScenarioInput = z.input<typeof ScenarioSchema>;
