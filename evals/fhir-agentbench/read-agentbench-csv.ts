// Reads a FHIR-AgentBench CSV as published: RFC 4180 quoting (csv-parse), then each Python-literal cell through
// python-literal.ts. A bad row is an error naming the row and column; nothing is guessed.
import { parse } from 'csv-parse/sync';
import {
  AgentBenchQuestionSchema,
  REQUIRED_COLUMNS,
  TrueAnswerSchema,
  TrueFhirIdsSchema,
  type AgentBenchQuestion,
} from './agentbench-question.ts';
import { parsePythonLiteral, PythonLiteralError } from './python-literal.ts';

export class AgentBenchCsvError extends Error {}

/** A CSV whose header has the benchmark's columns (the extension alone is not enough: other CSVs exist). */
export function isAgentBenchCsv(text: string): boolean {
  const header = text.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0] ?? '';
  const columns = new Set(header.split(',').map((c) => c.trim().replace(/^"|"$/g, '')));
  return REQUIRED_COLUMNS.every((c) => columns.has(c));
}

const CURRENT_TIME = /current time is (\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?)/i;

export function readAgentBenchCsv(text: string, source: string): AgentBenchQuestion[] {
  let rows: Array<Record<string, string>>;
  try {
    rows = parse(text, { columns: true, bom: true, skip_empty_lines: true, relax_column_count: false }) as Array<Record<string, string>>;
  } catch (err) {
    throw new AgentBenchCsvError(`${source}: not a valid CSV: ${(err as Error).message}`);
  }
  const missing = REQUIRED_COLUMNS.filter((c) => rows.length && !(c in rows[0]));
  if (missing.length) throw new AgentBenchCsvError(`${source}: missing column(s) ${missing.join(', ')}`);
  return rows.map((row, i) => readRow(row, `${source}: row ${i + 2}`));
}

function readRow(row: Record<string, string>, where: string): AgentBenchQuestion {
  const literal = (column: string, fallback: string) => {
    const cell = (row[column] ?? '').trim() || fallback;
    try {
      return parsePythonLiteral(cell);
    } catch (err) {
      if (err instanceof PythonLiteralError) throw new AgentBenchCsvError(`${where}: ${column}: ${err.message}`);
      throw err;
    }
  };
  const trueAnswer = TrueAnswerSchema.safeParse(literal('true_answer', '[]'));
  if (!trueAnswer.success) throw new AgentBenchCsvError(`${where}: true_answer: ${trueAnswer.error.issues[0]?.message}`);
  const trueFhirIds = TrueFhirIdsSchema.safeParse(literal('true_fhir_ids', '{}'));
  if (!trueFhirIds.success) {
    const issue = trueFhirIds.error.issues[0];
    throw new AgentBenchCsvError(`${where}: true_fhir_ids: ${issue?.path.join('.')} ${issue?.message}`);
  }
  const assumption = (row.assumption ?? '').trim();
  const mappable = (row.mappable_to_fhir ?? '').trim();
  const parsed = AgentBenchQuestionSchema.safeParse({
    questionId: (row.question_id ?? '').trim(),
    question: (row.question ?? '').trim(),
    trueAnswerText: row.true_answer ?? '',
    trueAnswer: trueAnswer.data,
    assumption,
    currentTime: CURRENT_TIME.exec(assumption)?.[1] ?? null,
    patientFhirId: (row.patient_fhir_id ?? '').trim(),
    trueFhirIds: trueFhirIds.data,
    mainTable: row.main_table_name || undefined,
    template: row.template || undefined,
    mappableToFhir: mappable === 'True' ? true : mappable === 'False' ? false : undefined,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AgentBenchCsvError(`${where}: ${issue?.path.join('.')}: ${issue?.message}`);
  }
  return parsed.data;
}
