// One FHIR interaction as a FHIR R4 AuditEvent (type rest, subtype the restful interaction). It names the key by
// its id, the resources shown by reference and the patients by reference: never a key, a message or a search value.
// A search records its query's shape (type and parameter names) and how many resources it read; what a scan read
// to match or count is counted, not listed, so a record's size follows what the caller was shown (issue 28).
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
  callerId: string;
  /** The HTTP status, or undefined when no answer came (network, timeout). */
  status: number | undefined;
  /** Why the gateway refused, when it did (names no data). */
  denied?: string;
  /** Type/id of every resource read, returned or written. */
  references: string[];
  /** Bare ids of the patients the interaction concerned. */
  patients: string[];
  /** The resource type searched. */
  searchedType?: string;
  /** The search's shape, `Type?name&name`: parameter names only (values may be names). */
  query?: string;
  /** Resources the search read (matches and included), listed or not. */
  read?: number;
  /** Resources read and not listed in `references` (a scan's, or past the record's size budget). */
  omitted?: number;
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
    const detail = [
      ...(f.read !== undefined ? [{ type: 'read', valueString: String(f.read) }] : []),
      ...(f.omitted ? [{ type: 'omitted', valueString: String(f.omitted) }] : []),
    ];
    entity.push({
      type: { system: 'http://hl7.org/fhir/resource-types', code: f.searchedType },
      role: { system: 'http://terminology.hl7.org/CodeSystem/object-role', code: '24', display: 'Query' },
      ...(f.query ? { query: Buffer.from(f.query).toString('base64') } : {}),
      ...(detail.length ? { detail } : {}),
    });
  }
  const patients = new Set(f.patients.map((id) => `Patient/${id}`));
  for (const reference of new Set(f.references)) {
    if (patients.has(reference)) continue;
    // The role alone (no type, no displays): a search can list a page of these, and every byte is fsynced.
    entity.push({ what: { reference }, role: { system: 'http://terminology.hl7.org/CodeSystem/object-role', code: '4' } });
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
      who: { identifier: { system: KEY_ID_SYSTEM, value: f.callerId }, display: f.callerId },
      altId: f.callerId,
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

/**
 * The event within `maxBytes` as JSON: past it the listed resources are dropped from the end (counted in `omitted`),
 * then the patients beyond those the request named. The interaction itself is always recorded.
 */
export function fitAuditEvent(f: AuditFacts, recorded: Date, maxBytes: number): AuditEvent {
  const full = buildAuditEvent(f, recorded);
  if (Buffer.byteLength(JSON.stringify(full)) <= maxBytes) return full;
  const patientRefs = new Set(f.patients.map((id) => `Patient/${id}`));
  const listed = [...new Set(f.references)].filter((r) => !patientRefs.has(r));
  const base = { ...f, read: f.read ?? listed.length };
  const fits = (n: number, patients = f.patients) => {
    const e = buildAuditEvent(
      { ...base, references: listed.slice(0, n), patients, omitted: (f.omitted ?? 0) + listed.length - n },
      recorded,
    );
    return Buffer.byteLength(JSON.stringify(e)) <= maxBytes ? e : undefined;
  };
  let lo = 0;
  let hi = listed.length;
  if (!fits(0))
    return fits(0, []) ?? buildAuditEvent({ ...base, references: [], patients: [], omitted: (f.omitted ?? 0) + listed.length }, recorded);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return fits(lo)!;
}
