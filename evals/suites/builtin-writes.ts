// The writes the built-in action scenarios ask for: the resource the reference solver creates, and the fields
// a model's write must have. Fields name only what the instruction states, so any faithful FHIR write passes.
import type { MedicationRequest, Observation, ServiceRequest } from '@medplum/fhirtypes';
import type { ExpectedWrite, FieldMatcher } from '../scenario.ts';

export interface Coding {
  system: string;
  code: string;
  display?: string;
}

const subjectOf = (patient: string) => ({ reference: `Patient/${patient}` });
const codeFields = (c: Coding, base = 'code'): Record<string, FieldMatcher> => ({ [`${base}.coding.code`]: c.code });

export function vitalWrite(p: { patient: string; code: Coding; value: number; unit: string; now: string }): {
  resource: Observation;
  expected: ExpectedWrite;
} {
  return {
    resource: {
      resourceType: 'Observation',
      status: 'final',
      category: [
        { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'vital-signs', display: 'Vital Signs' }] },
      ],
      code: { coding: [p.code], text: p.code.display },
      subject: subjectOf(p.patient),
      effectiveDateTime: p.now,
      valueQuantity: { value: p.value, unit: p.unit, system: 'http://unitsofmeasure.org', code: p.unit },
    },
    expected: {
      resourceType: 'Observation',
      fields: {
        ...codeFields(p.code),
        'valueQuantity.value': { approx: p.value, tolerance: 1e-6 },
        'subject.reference': `Patient/${p.patient}`,
        effectiveDateTime: { instant: p.now },
        status: { oneOf: ['final', 'preliminary', 'amended'] },
      },
    },
  };
}

export function medicationWrite(p: {
  patient: string;
  medication: Coding;
  dose: number;
  unit: string;
  route: 'oral' | 'IV';
  rate?: { value: number; unit: string };
  now: string;
}): { resource: MedicationRequest; expected: ExpectedWrite } {
  const routeRe = p.route === 'oral' ? '^\\s*(oral|po|by mouth|oral route)\\s*$' : '^\\s*(iv|intravenous|intravenous route)\\s*$';
  return {
    resource: {
      resourceType: 'MedicationRequest',
      status: 'active',
      intent: 'order',
      medicationCodeableConcept: { coding: [p.medication], text: p.medication.display },
      subject: subjectOf(p.patient) as MedicationRequest['subject'],
      authoredOn: p.now,
      dosageInstruction: [
        {
          route: { text: p.route },
          doseAndRate: [
            {
              doseQuantity: { value: p.dose, unit: p.unit },
              ...(p.rate ? { rateQuantity: { value: p.rate.value, unit: p.rate.unit } } : {}),
            },
          ],
        },
      ],
    },
    expected: {
      resourceType: 'MedicationRequest',
      fields: {
        ...codeFields(p.medication, 'medicationCodeableConcept'),
        'dosageInstruction.doseAndRate.doseQuantity.value': { approx: p.dose, tolerance: 0.1 },
        'dosageInstruction.doseAndRate.doseQuantity.unit|dosageInstruction.doseAndRate.doseQuantity.code': p.unit,
        'dosageInstruction.route.text|dosageInstruction.route.coding.display|dosageInstruction.route.coding.code': {
          regex: routeRe,
          flags: 'i',
        },
        ...(p.rate ? { 'dosageInstruction.doseAndRate.rateQuantity.value': { approx: p.rate.value, tolerance: 1e-6 } } : {}),
        'subject.reference': `Patient/${p.patient}`,
        status: 'active',
        intent: 'order',
      },
    },
  };
}

export function serviceWrite(p: { patient: string; code: Coding; now: string; note?: string; priority?: string }): {
  resource: ServiceRequest;
  expected: ExpectedWrite;
} {
  return {
    resource: {
      resourceType: 'ServiceRequest',
      status: 'active',
      intent: 'order',
      ...(p.priority ? { priority: p.priority as ServiceRequest['priority'] } : {}),
      code: { coding: [p.code], text: p.code.display },
      subject: subjectOf(p.patient) as ServiceRequest['subject'],
      authoredOn: p.now,
      ...(p.note ? { note: [{ text: p.note }] } : {}),
    },
    expected: {
      resourceType: 'ServiceRequest',
      fields: {
        ...codeFields(p.code),
        'subject.reference': `Patient/${p.patient}`,
        status: 'active',
        intent: 'order',
        ...(p.priority ? { priority: p.priority } : {}),
        ...(p.note ? { 'note.text': { includes: p.note, caseInsensitive: true } } : {}),
      },
    },
  };
}
