// One FHIR interaction as a FHIR R4 AuditEvent (type rest, subtype the restful interaction). It names the key by
// its id, the resources by reference and the patients by reference: never a key, a message or a search value.
import type { AuditEvent, AuditEventEntity } from '@medplum/fhirtypes';

/** The restful-interaction codes the gateway records. */
export type AuditSubtype =
  | 'read'
  | 'vread'
  | 'history-instance'
  | 'search-type'
  | 'search-system'
  | 'create'
  | 'update'
  | 'patch'
  | 'delete'
  | 'batch'
  | 'transaction'
  | 'operation';

export interface AuditFacts {
  subtype: AuditSubtype;
  /** The API key's id. */
  keyId: string;
  /** The HTTP status, or undefined when no answer came (network, timeout). */
  status: number | undefined;
  /** Why the gateway refused, when it did (names no data). */
  denied?: string;
  /** Type/id of every resource read, returned or written. */
  references: string[];
  /** Bare ids of the patients the interaction concerned. */
  patients: string[];
  /** The resource type searched (the query itself is not recorded: its values may be names). */
  searchedType?: string;
  /** The agent's tool, when a tool made the request; else it came through /fhir. */
  tool?: string;
  /** The client's address, for requests through /fhir. */
  address?: string;
}

const AUDIT_SOURCE = 'fhir-agent-gateway';
const KEY_ID_SYSTEM = 'urn:fhir-agent-gateway:api-key-id';

const ACTION: Record<AuditSubtype, AuditEvent['action']> = {
  read: 'R',
  vread: 'R',
  'history-instance': 'R',
  'search-type': 'E',
  'search-system': 'E',
  create: 'C',
  update: 'U',
  patch: 'U',
  delete: 'D',
  batch: 'E',
  transaction: 'E',
  operation: 'E',
};

/** 0 success, 4 minor failure (refused, not found, bad request), 8 serious failure (server or network). */
function auditOutcome(status: number | undefined): AuditEvent['outcome'] {
  if (status === undefined || status >= 500) return '8';
  return status >= 400 ? '4' : '0';
}

export function buildAuditEvent(f: AuditFacts, recorded: Date): AuditEvent {
  const entity: AuditEventEntity[] = [];
  if (f.searchedType) {
    entity.push({
      type: { system: 'http://hl7.org/fhir/resource-types', code: f.searchedType },
      role: { system: 'http://terminology.hl7.org/CodeSystem/object-role', code: '24', display: 'Query' },
    });
  }
  const patients = new Set(f.patients.map((id) => `Patient/${id}`));
  for (const reference of new Set(f.references)) {
    if (patients.has(reference)) continue;
    entity.push({
      what: { reference },
      type: { system: 'http://terminology.hl7.org/CodeSystem/audit-entity-type', code: '2', display: 'System Object' },
      role: { system: 'http://terminology.hl7.org/CodeSystem/object-role', code: '4', display: 'Domain Resource' },
    });
  }
  for (const reference of patients) {
    entity.push({
      what: { reference },
      type: { system: 'http://terminology.hl7.org/CodeSystem/audit-entity-type', code: '1', display: 'Person' },
      role: { system: 'http://terminology.hl7.org/CodeSystem/object-role', code: '1', display: 'Patient' },
    });
  }
  const agent: AuditEvent['agent'] = [
    {
      type: { coding: [{ system: 'http://dicom.nema.org/resources/ontology/DCM', code: '110153', display: 'Source Role ID' }] },
      who: { identifier: { system: KEY_ID_SYSTEM, value: f.keyId }, display: f.keyId },
      altId: f.keyId,
      requestor: true,
      ...(f.address ? { network: { address: f.address, type: '2' as const } } : {}),
    },
  ];
  if (f.tool) {
    agent.push({
      type: { coding: [{ system: 'http://dicom.nema.org/resources/ontology/DCM', code: '110150', display: 'Application' }] },
      who: { display: `${AUDIT_SOURCE} tool ${f.tool}` },
      requestor: false,
    });
  }
  const outcome = auditOutcome(f.status);
  const outcomeDesc = f.denied
    ? `${f.status ?? 403} denied: ${f.denied}`
    : f.status === undefined
      ? 'no answer from the FHIR server'
      : `HTTP ${f.status}`;
  return {
    resourceType: 'AuditEvent',
    type: { system: 'http://terminology.hl7.org/CodeSystem/audit-event-type', code: 'rest', display: 'RESTful Operation' },
    subtype: [{ system: 'http://hl7.org/fhir/restful-interaction', code: f.subtype }],
    action: ACTION[f.subtype],
    recorded: recorded.toISOString(),
    outcome,
    outcomeDesc,
    agent,
    source: {
      site: AUDIT_SOURCE,
      observer: { display: AUDIT_SOURCE },
      type: [{ system: 'http://terminology.hl7.org/CodeSystem/security-source-type', code: '4', display: 'Application Server' }],
    },
    ...(entity.length ? { entity } : {}),
  };
}
