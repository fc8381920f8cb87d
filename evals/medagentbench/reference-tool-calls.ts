// The write-tool calls that make the reference solver's planned MedAgentBench writes through the gateway's tools,
// asking in the forms the benchmark's grader reads (timestamps as the task's clock spells them, the route as a
// bare string, the BP code as text, the vital-signs category coding as the task names it), so a tools-mode run of
// the reference is graded by `refsol` on what a model could have asked for.
import type { MedicationRequest, Observation, Resource, ServiceRequest } from '@medplum/fhirtypes';

export interface ToolCall {
  name: 'record_observation' | 'order_medication' | 'order_service';
  args: Record<string, unknown>;
}

const patientOf = (r: { subject?: { reference?: string } }) => r.subject?.reference ?? '';

export function referenceToolCall(resource: Resource): ToolCall {
  switch (resource.resourceType) {
    case 'Observation': {
      const o = resource as Observation;
      const code = o.code?.coding?.[0];
      return {
        name: 'record_observation',
        args: {
          patient: patientOf(o),
          ...(code ? { code } : {}),
          ...(o.code?.text ? { code_text: o.code.text } : {}),
          ...(o.category?.[0]?.coding?.[0] ? { category_coding: o.category[0].coding[0] } : {}),
          ...(o.valueString !== undefined ? { value_string: o.valueString } : {}),
          ...(o.valueQuantity ? { value_quantity: { value: o.valueQuantity.value, unit: o.valueQuantity.unit } } : {}),
          ...(o.effectiveDateTime ? { effective_date_time: o.effectiveDateTime } : {}),
          status: o.status,
        },
      };
    }
    case 'MedicationRequest': {
      const m = resource as MedicationRequest;
      const d = m.dosageInstruction?.[0];
      return {
        name: 'order_medication',
        args: {
          patient: patientOf(m),
          medication: m.medicationCodeableConcept?.coding?.[0],
          dose: d?.doseAndRate?.[0]?.doseQuantity,
          route: d?.route?.text,
          ...(d?.doseAndRate?.[0]?.rateQuantity ? { rate: d.doseAndRate[0].rateQuantity } : {}),
          ...(m.authoredOn ? { authored_on: m.authoredOn } : {}),
        },
      };
    }
    case 'ServiceRequest': {
      const s = resource as ServiceRequest;
      return {
        name: 'order_service',
        args: {
          patient: patientOf(s),
          code: s.code?.coding?.[0],
          ...(s.priority ? { priority: s.priority } : {}),
          ...(s.note?.[0]?.text ? { note: s.note[0].text } : {}),
          ...(s.occurrenceDateTime ? { occurrence_date_time: s.occurrenceDateTime } : {}),
          ...(s.authoredOn ? { authored_on: s.authoredOn } : {}),
        },
      };
    }
    default:
      throw new Error(`no write tool writes a ${resource.resourceType}`);
  }
}
