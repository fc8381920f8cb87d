// The FHIR-AgentBench question contract (coralehr/fhir-mcp-eval `final_dataset/*.csv`, from glee4810/FHIR-AgentBench):
// one CSV row per question. Types only plus the zod schemas that validate a row once its Python literals are read.
import { z } from 'zod';

/** The columns a file must have; the published files also carry split, sql_query, template, val_dict, proc_query. */
export const REQUIRED_COLUMNS = ['question_id', 'question', 'true_answer', 'patient_fhir_id'] as const;

/** `true_answer` read from its Python repr: rows of cells (a SQL result), `[]` when the query returned nothing. */
const CellSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export type AnswerCell = z.infer<typeof CellSchema>;
export const TrueAnswerSchema = z.array(z.union([z.array(CellSchema), CellSchema]));

/** `true_fhir_ids` read from its Python repr: resource type → ids; `{}` (or an empty cell) when there are none. */
export const TrueFhirIdsSchema = z.record(z.string().regex(/^[A-Z][A-Za-z]+$/, 'a FHIR resource type'), z.array(z.string().min(1)));

export const AgentBenchQuestionSchema = z.object({
  questionId: z.string().min(1),
  question: z.string().min(1),
  /** The cell as published, kept as evidence and shown to the judge. */
  trueAnswerText: z.string(),
  trueAnswer: TrueAnswerSchema,
  /** E.g. "Assume the current time is 2136-12-31 23:59:00. Search for …"; empty in rows that need no clock. */
  assumption: z.string(),
  /** The naive "current time" found in the assumption, as written (`YYYY-MM-DD HH:MM:SS`). */
  currentTime: z.string().nullable(),
  patientFhirId: z.string().min(1),
  trueFhirIds: TrueFhirIdsSchema,
  mainTable: z.string().optional(),
  template: z.string().optional(),
  mappableToFhir: z.boolean().optional(),
});
export type AgentBenchQuestion = z.infer<typeof AgentBenchQuestionSchema>;

/** The benchmark's evaluation treats a question with no gold resources as having no answer, whatever `true_answer`
 * holds (its script compares the set of gold resource types with `{}`). */
export function expectsNoAnswer(q: Pick<AgentBenchQuestion, 'trueFhirIds'>): boolean {
  return Object.keys(q.trueFhirIds).length === 0;
}

export function goldReferences(q: Pick<AgentBenchQuestion, 'trueFhirIds'>): string[] {
  return Object.entries(q.trueFhirIds).flatMap(([type, ids]) => ids.map((id) => `${type}/${id}`));
}
