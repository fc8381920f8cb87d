// Scopes and audit around one request to the embedded FHIR server at /fhir: refused before it runs when the key's
// scopes do not cover it, run with the key's access inside the repository (which decides what exists for the key),
// and recorded as an AuditEvent either way, with the patients of everything it showed. Written against `handle` only, so it knows nothing about fastify.
import { forbidden } from '@medplum/core';
import type { Bundle, Resource } from '@medplum/fhirtypes';
import type { AuditFacts } from '../audit/audit-event.ts';
import type { AuditTrail } from '../audit/audit-trail.ts';
import type { EmbeddedFhirRequest, EmbeddedFhirResponse } from '../../fhir/server/embedded-fhir-server.ts';
import { withDiagnostics } from '../../vocabulary/fhir/with-diagnostics.ts';
import { authorizeInteraction } from './authorize-interaction.ts';
import { classifyFhirRequest } from './classify-fhir-request.ts';
import { keyRepositoryAccess } from './key-repository-access.ts';
import type { KeyAccess } from './key-access.ts';
import { patientIdsOf } from './patient-compartment.ts';

export interface GuardFhirRequestOptions {
  access: KeyAccess;
  audit: AuditTrail;
  /** The client's address, for the audit. */
  address?: string;
  handle: (req: EmbeddedFhirRequest) => Promise<EmbeddedFhirResponse>;
}

const FHIR_JSON = 'application/fhir+json; charset=utf-8';

function refused(reason: string): EmbeddedFhirResponse {
  return { status: 403, body: withDiagnostics(forbidden, reason), headers: { 'content-type': FHIR_JSON } };
}

const isResource = (v: unknown): v is Resource => typeof v === 'object' && v !== null && typeof (v as Resource).resourceType === 'string';

/** Type/id of what a write answered, from the resource or a batch entry's Location. */
function writtenReferences(body: unknown): string[] {
  if (!isResource(body)) return [];
  if (body.resourceType !== 'Bundle') return body.id && body.resourceType !== 'OperationOutcome' ? [`${body.resourceType}/${body.id}`] : [];
  return ((body as Bundle).entry ?? []).flatMap((e) => {
    const m = /^(?:.*\/)?([A-Z][A-Za-z]+\/[A-Za-z0-9\-.]{1,64})(?:\/_history\/[^/]+)?$/.exec(e.response?.location ?? '');
    if (m) return [m[1]];
    return isResource(e.resource) && e.resource.id && e.resource.resourceType !== 'OperationOutcome'
      ? [`${e.resource.resourceType}/${e.resource.id}`]
      : [];
  });
}

export async function guardFhirRequest(req: EmbeddedFhirRequest, o: GuardFhirRequestOptions): Promise<EmbeddedFhirResponse> {
  const i = classifyFhirRequest(req);
  if (i.subtype === 'capabilities') return o.handle(req);
  const subtype = i.subtype;
  const [type] = i.resourceTypes;
  const target = i.id && type ? [`${type}/${i.id}`] : [];
  const facts = (f: Partial<AuditFacts> & Pick<AuditFacts, 'status'>): AuditFacts => ({
    subtype,
    callerId: o.access.id,
    address: o.address,
    searchedType: subtype === 'search-type' ? type : undefined,
    references: target,
    patients: [],
    ...f,
  });
  const deny = async (reason: string, patients: string[], references = target) => {
    await o.audit.record(facts({ status: 403, denied: reason, patients, references }));
    return refused(reason);
  };

  // The refusals a client can act on, decided from the request before it runs (the scope it lacks, the patients
  // it must name)...
  const auth = authorizeInteraction(o.access, i);
  if (!auth.ok) return deny(auth.reason, auth.requestedPatients);
  // ...and the enforcement, inside the repository: everything the request reads or writes, through any path the
  // router takes, is held to the key's access there. What it showed is recorded for the audit.
  const shown = new Map<string, Resource>();
  const access = keyRepositoryAccess(o.access, (r) => void shown.set(`${r.resourceType}/${r.id}`, r));
  // What an update or delete replaces: its patient goes in the record.
  let before: Resource | undefined;
  if (i.id && (subtype === 'update' || subtype === 'delete' || subtype === 'patch')) {
    const current = await o.handle({ method: 'GET', url: `/${type}/${i.id}`, baseUrl: req.baseUrl, access });
    if (current.status === 200 && isResource(current.body)) before = current.body;
    shown.clear();
  }
  const res = await o.handle({ ...req, access });
  const reads = [...shown.values()];
  const touched = [...new Set([...auth.requestedPatients, ...(before ? patientIdsOf(before) : []), ...reads.flatMap(patientIdsOf)])];
  const references =
    res.status < 300
      ? [...new Set([...target, ...shown.keys(), ...(i.needs.some(isWrite) || i.entries ? writtenReferences(res.body) : [])])]
      : target;
  await o.audit.record(facts({ status: res.status, references, patients: touched }));
  return res;
}

const isWrite = (n: string) => n === 'create' || n === 'update' || n === 'delete';
