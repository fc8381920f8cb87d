// AUDIT_SINK=fhir: each AuditEvent is created on the FHIR server the gateway uses (the embedded one, or
// FHIR_BASE_URL), through the raw client: these writes are not themselves audited or scope-checked.
import type { FhirClient } from '../fhir/fhir-client.ts';
import type { AuditSink } from './audit-trail.ts';

export function createFhirAuditSink(fhir: FhirClient): AuditSink {
  return {
    write: async (event) => {
      await fhir.createResource(event);
    },
    close: async () => {},
  };
}
