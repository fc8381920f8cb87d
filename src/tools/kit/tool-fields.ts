// Zod fields shared by the FHIR tools. Every field says what it means (`.describe()`), because that text is
// all the model sees; every integer is bounded so a model cannot ask for unbounded work. Models never see a regex
// (grammar converters choke on them, see src/tools/kit/portable-json-schema.ts): they read its message instead, so each
// `.regex()` message states the rule.
import { z } from 'zod';
import { FHIR_ID, FHIR_ID_PATTERN, NOT_A_DOT_SEGMENT } from '../../vocabulary/fhir/fhir-id.ts';

const FHIR_DATE = /^\d{4}(-\d{2}(-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?)?)?$/;
const FHIR_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** The tools' clinical resource types; `read_resource` accepts only these. */
export const READABLE_TYPES = [
  'Patient',
  'Observation',
  'Condition',
  'MedicationRequest',
  'MedicationAdministration',
  'MedicationDispense',
  'MedicationStatement',
  'Specimen',
  'Procedure',
  'Encounter',
  'AllergyIntolerance',
  'Immunization',
  'DiagnosticReport',
  'ServiceRequest',
  'Medication',
  'Practitioner',
  'Organization',
  'Location',
  'CarePlan',
] as const;

export const RXNORM = 'http://www.nlm.nih.gov/research/umls/rxnorm';
export const NDC = 'http://hl7.org/fhir/sid/ndc';
export const UCUM = 'http://unitsofmeasure.org';

export const idField = () => z.string().regex(FHIR_ID, 'must be a FHIR id: letters, digits, "-" or ".", at most 64, and not only dots');

export const patientField = () =>
  z
    .string()
    .regex(
      new RegExp(`^(Patient/)?${NOT_A_DOT_SEGMENT}${FHIR_ID_PATTERN}$`),
      'must be a Patient id (letters, digits, "-" or ".", at most 64, not only dots) or "Patient/<id>"',
    )
    .describe('The patient, e.g. "S1000001" or "Patient/S1000001"');

/** Bare id from "Patient/<id>" or "<id>". */
export function patientId(patient: string): string {
  return patient.startsWith('Patient/') ? patient.slice('Patient/'.length) : patient;
}

/** The typed form for search: every server matches `Patient/<id>`, not all match a bare id. */
export function patientReference(patient: string): string {
  return `Patient/${patientId(patient)}`;
}

export const dateField = (what: string) =>
  z.string().regex(FHIR_DATE, 'must be a FHIR date or dateTime, e.g. 2024-03-01 or 2024-03-01T08:00:00Z').describe(what);

export const dateTimeField = (what: string) =>
  z.string().regex(FHIR_DATETIME, 'must be a full dateTime with timezone, e.g. 2024-03-01T08:00:00Z').describe(what);

/** `system|code` or a bare code; commas mean OR, as in FHIR search. */
export const tokenField = (what: string) =>
  z
    .string()
    .min(1)
    .max(300)
    .regex(
      /^[^\s&#]+( [^\s&#]+)*$/,
      'must be "system|code" or a bare code (commas for several), without "&", "#", tabs, line breaks, or leading, trailing or double spaces',
    )
    .describe(what);

export const countField = (fallback: number, max: number) =>
  z.number().int().min(1).max(max).default(fallback).describe(`Maximum number of results (1-${max}, default ${fallback})`);

export const rawField = () =>
  z
    .boolean()
    .default(false)
    .describe('Return full FHIR resources instead of compact summaries (larger; use only when a detail is missing)');

/** A coding; `system` is required when a custom system schema is given (e.g. an enum of allowed systems). */
export const codingField = (what: string, system?: z.ZodType<string>) =>
  z
    .object({
      system: system ?? z.string().min(1).max(200).describe('Code system URI, e.g. http://loinc.org').optional(),
      code: z.string().min(1).max(100).describe('The code, e.g. 2823-3'),
      display: z.string().min(1).max(300).optional().describe('Human-readable name of the code'),
    })
    .describe(what);

export const quantityField = (what: string) =>
  z
    .object({
      value: z.number().min(-1e9).max(1e9).describe('Numeric value'),
      unit: z.string().min(1).max(50).describe('Unit, UCUM where possible, e.g. mmol/L, mg, mEq, g, h'),
    })
    .describe(what);

/** Free text matched against the start of a code's name (FHIR `code:text`, on HAPI and the embedded server alike). */
export const textField = (example: string) =>
  z
    .string()
    .min(1)
    .max(100)
    .describe(
      `Name to search for, e.g. "${example}": matches codes whose name or text starts with it, ignoring case (not the middle of a word)`,
    );

/** Date range filters as FHIR prefixes: `ge<from>` and `le<to>`. */
export function dateRange(from: string | undefined, to: string | undefined): string[] | undefined {
  const parts = [from && `ge${from}`, to && `le${to}`].filter((x): x is string => Boolean(x));
  return parts.length ? parts : undefined;
}

/** `date_from` / `date_to` for a search, e.g. dateWindow('reports') → "Only reports on or after this date". */
export const dateWindow = (noun: string, unit = 'date') => ({
  date_from: dateField(`Only ${noun} on or after this ${unit}`).optional(),
  date_to: dateField(`Only ${noun} on or before this ${unit}`).optional(),
});
