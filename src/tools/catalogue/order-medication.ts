import type { MedicationRequest } from '@medplum/fhirtypes';
import { z } from 'zod';
import { codingField, dateTimeField, NDC, patientField, patientId, quantityField, RXNORM } from '../kit/tool-fields.ts';
import { defineTool } from '../kit/tool.ts';
import { writeResource } from './write-resource.ts';

export const orderMedication = defineTool({
  name: 'order_medication',
  description:
    'Order a medication for a patient (an active MedicationRequest with intent "order"): medication code, dose, route, optional rate ' +
    'and frequency. Writes to the record; only available when writes are enabled. Retrying the same call never duplicates it.',
  inputSchema: z.object({
    patient: patientField(),
    medication: codingField(
      `The medication: RxNorm (${RXNORM}) or NDC (${NDC}) code`,
      z.enum([RXNORM, NDC]).describe(`Code system: ${RXNORM} or ${NDC}`),
    ),
    dose: quantityField('Dose per administration, e.g. {value: 40, unit: "mEq"} or {value: 2, unit: "g"}'),
    // Stored as FHIR's CodeableConcept {text}; the bare string is what was asked for, and what MedAgentBench's grader
    // reads from the request (evals/medagentbench/tool-writes-transcript.ts).
    route: z.string().min(1).max(50).describe('Route of administration, e.g. "oral" or "IV"'),
    rate: quantityField('Infusion rate or duration, e.g. {value: 2, unit: "h"} for "over 2 hours"').optional(),
    frequency: z.string().min(1).max(200).describe('Frequency as text, e.g. "once", "twice daily"').optional(),
    note: z.string().min(1).max(1000).describe('Free-text note to the pharmacist or nurse').optional(),
    authored_on: dateTimeField('When the order is written, with timezone, written as given; default now').optional(),
  }),
  write: true,
  resourceTypes: ['MedicationRequest'],
  execute: (input, ctx) =>
    writeResource(
      'order_medication',
      input,
      (): MedicationRequest => ({
        resourceType: 'MedicationRequest',
        status: 'active',
        intent: 'order',
        medicationCodeableConcept: { coding: [input.medication], ...(input.medication.display ? { text: input.medication.display } : {}) },
        subject: { reference: `Patient/${patientId(input.patient)}` },
        authoredOn: input.authored_on ?? ctx.now().toISOString(),
        dosageInstruction: [
          {
            ...(input.frequency ? { text: input.frequency, timing: { code: { text: input.frequency } } } : {}),
            route: { text: input.route },
            doseAndRate: [{ doseQuantity: input.dose, ...(input.rate ? { rateQuantity: input.rate } : {}) }],
          },
        ],
        ...(input.note ? { note: [{ text: input.note }] } : {}),
      }),
      ctx,
    ),
});
