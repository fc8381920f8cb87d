import type { Observation, ObservationComponent } from '@medplum/fhirtypes';
import { z } from 'zod';
import { codingField, dateTimeField, patientField, patientId, quantityField, UCUM } from '../kit/tool-fields.ts';
import { defineTool } from '../kit/tool.ts';
import { writeResource } from './write-resource.ts';

const LOINC = 'http://loinc.org';
const CATEGORY_SYSTEM = 'http://terminology.hl7.org/CodeSystem/observation-category';
const CATEGORY_DISPLAY = {
  'vital-signs': 'Vital Signs',
  laboratory: 'Laboratory',
  'social-history': 'Social History',
  exam: 'Exam',
  survey: 'Survey',
};

const schema = z
  .object({
    patient: patientField(),
    code: codingField(
      'What was observed, e.g. {system:"http://loinc.org", code:"8867-4", display:"Heart rate"}; system may be omitted for a local flowsheet code',
    ).optional(),
    // The forms a task may dictate, written as given (valid FHIR either way): a code that is only a name, stored
    // as {text}; a category coding with its own system and display.
    code_text: z
      .string()
      .min(1)
      .max(300)
      .describe('The name of what was observed, e.g. "BP"; alone (without code) it is written as code {text}')
      .optional(),
    category: z
      .enum(['vital-signs', 'laboratory', 'social-history', 'exam', 'survey'])
      .default('vital-signs')
      .describe('Observation category (default vital-signs)'),
    category_coding: codingField(
      'The category as a coding written as given, instead of category, e.g. {system, code:"vital-signs", display:"Vital Signs"}',
      z.string().min(1).max(200).describe('Code system URI of the category'),
    ).optional(),
    value_quantity: quantityField('Numeric result with unit, e.g. {value: 72, unit: "/min"}').optional(),
    value_string: z.string().min(1).max(500).describe('Result as text, e.g. "118/77 mmHg" when asked to record it as a string').optional(),
    blood_pressure: z
      .object({
        systolic: z.number().min(0).max(400).describe('Systolic pressure in mmHg'),
        diastolic: z.number().min(0).max(300).describe('Diastolic pressure in mmHg'),
      })
      .describe('Blood pressure as systolic/diastolic components (mm[Hg])')
      .optional(),
    effective_date_time: dateTimeField('When it was observed, with timezone; default now').optional(),
    status: z.enum(['final', 'preliminary', 'amended']).default('final').describe('Result status (default final)'),
    note: z.string().min(1).max(1000).describe('Free-text comment').optional(),
  })
  .superRefine((v, ctx) => {
    if (!v.code && !v.code_text)
      ctx.addIssue({ code: 'custom', path: ['code'], message: 'give code, or code_text for a name without a code' });
    const values = [v.value_quantity, v.value_string, v.blood_pressure].filter((x) => x !== undefined).length;
    if (values !== 1)
      ctx.addIssue({
        code: 'custom',
        path: ['value_quantity'],
        message: 'give exactly one of value_quantity, value_string or blood_pressure',
      });
  });

const bpComponent = (code: string, display: string, value: number): ObservationComponent => ({
  code: { coding: [{ system: LOINC, code, display }] },
  valueQuantity: { value, unit: 'mmHg', system: UCUM, code: 'mm[Hg]' },
});

export const recordObservation = defineTool({
  name: 'record_observation',
  description:
    'Record an observation (vital sign or result) for a patient. Give exactly one value: value_quantity, value_string or blood_pressure. ' +
    'Writes to the record; only available when writes are enabled. Retrying the same call never duplicates it.',
  inputSchema: schema,
  write: true,
  resourceTypes: ['Observation'],
  execute: (input, ctx) =>
    writeResource(
      'record_observation',
      input,
      (): Observation => ({
        resourceType: 'Observation',
        status: input.status,
        category: [
          {
            coding: [input.category_coding ?? { system: CATEGORY_SYSTEM, code: input.category, display: CATEGORY_DISPLAY[input.category] }],
          },
        ],
        code: input.code
          ? { coding: [input.code], text: input.code_text ?? input.code.display ?? input.code.code }
          : { text: input.code_text },
        subject: { reference: `Patient/${patientId(input.patient)}` },
        effectiveDateTime: input.effective_date_time ?? ctx.now().toISOString(),
        ...(input.value_quantity ? { valueQuantity: { ...input.value_quantity, system: UCUM, code: input.value_quantity.unit } } : {}),
        ...(input.value_string !== undefined ? { valueString: input.value_string } : {}),
        ...(input.blood_pressure
          ? {
              component: [
                bpComponent('8480-6', 'Systolic blood pressure', input.blood_pressure.systolic),
                bpComponent('8462-4', 'Diastolic blood pressure', input.blood_pressure.diastolic),
              ],
            }
          : {}),
        ...(input.note ? { note: [{ text: input.note }] } : {}),
      }),
      ctx,
    ),
});
