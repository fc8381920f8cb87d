// AUDIT_SINK=fhir: each AuditEvent is created on the FHIR server the gateway uses (the embedded one, or
// FHIR_BASE_URL), through the raw client: these writes are not themselves audited or scope-checked.
// Servers that enforce referential integrity (HAPI's default) refuse a record naming a resource that does not
// exist (a refused read of a made-up id, a deleted resource); such a record is stored again with each reference
// as an identifier and as the entity's name, found by `AuditEvent?entity-name:exact=Patient/x` (any server).
import type { AuditEvent } from '@medplum/fhirtypes';
import { FhirError, type FhirClient } from '../../fhir/client/fhir-client.ts';
import type { AuditSink } from './audit-trail.ts';

const REFERENCE_SYSTEM = 'urn:fhir-agent-gateway:reference';

function withLogicalReferences(event: AuditEvent): AuditEvent {
  return {
    ...event,
    entity: event.entity?.map(({ what, ...rest }) =>
      what?.reference
        ? {
            ...rest,
            name: what.reference,
            what: { identifier: { system: REFERENCE_SYSTEM, value: what.reference }, display: what.reference },
          }
        : { ...rest, what },
    ),
  };
}

export function createFhirAuditSink(fhir: FhirClient): AuditSink {
  return {
    write: async (event) => {
      try {
        await fhir.createResource(event);
      } catch (err) {
        if (!(err instanceof FhirError) || ![400, 409, 412, 422].includes(err.status) || !event.entity?.some((e) => e.what?.reference))
          throw err;
        await fhir.createResource(withLogicalReferences(event));
      }
    },
    close: async () => {},
  };
}
