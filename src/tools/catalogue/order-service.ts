import type { ServiceRequest } from '@medplum/fhirtypes';
import { z } from 'zod';
import { codingField, dateTimeField, patientField, patientId } from '../kit/tool-fields.ts';
import { defineTool } from '../kit/tool.ts';
import { writeResource } from './write-resource.ts';

const SNOMED = 'http://snomed.info/sct';
const CATEGORY = {
  lab: { system: SNOMED, code: '108252007', display: 'Laboratory procedure' },
  referral: { system: SNOMED, code: '3457005', display: 'Patient referral' },
};

export const orderService = defineTool({
  name: 'order_service',
  description:
    'Order a lab test or a referral for a patient (an active ServiceRequest with intent "order"). ' +
    'Writes to the record; only available when writes are enabled. Retrying the same call never duplicates it.',
  inputSchema: z.object({
    patient: patientField(),
    code: codingField(
      'What is ordered, e.g. {system:"http://loinc.org", code:"4548-4", display:"Hemoglobin A1c"} or a SNOMED referral code',
      z.string().min(1).max(200).describe('Code system URI, e.g. http://loinc.org or http://snomed.info/sct'),
    ),
    category: z.enum(['lab', 'referral']).describe('Lab test or referral').optional(),
    priority: z.enum(['routine', 'urgent', 'asap', 'stat']).default('routine').describe('Order priority (default routine)'),
    note: z.string().min(1).max(2000).describe('Free-text note, e.g. the referral reason').optional(),
    occurrence_date_time: dateTimeField('When it should happen').optional(),
    authored_on: dateTimeField('When the order is written, with timezone, written as given; default now').optional(),
  }),
  write: true,
  resourceTypes: ['ServiceRequest'],
  execute: (input, ctx) =>
    writeResource(
      'order_service',
      input,
      (): ServiceRequest => ({
        resourceType: 'ServiceRequest',
        status: 'active',
        intent: 'order',
        priority: input.priority,
        ...(input.category ? { category: [{ coding: [CATEGORY[input.category]] }] } : {}),
        code: { coding: [input.code], ...(input.code.display ? { text: input.code.display } : {}) },
        subject: { reference: `Patient/${patientId(input.patient)}` },
        authoredOn: input.authored_on ?? ctx.now().toISOString(),
        ...(input.occurrence_date_time ? { occurrenceDateTime: input.occurrence_date_time } : {}),
        ...(input.note ? { note: [{ text: input.note }] } : {}),
      }),
      ctx,
    ),
});
