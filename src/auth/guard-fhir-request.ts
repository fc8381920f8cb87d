// Scopes and audit around one request to the embedded FHIR server at /fhir: refused before it runs when the key's
// scopes do not cover it, checked again on what it returned (a read's patient, an _include's type), and recorded
// as an AuditEvent either way. Written against `handle` only, so it knows nothing about fastify.
import { forbidden } from '@medplum/core';
import type { Bundle, Resource } from '@medplum/fhirtypes';
import type { AuditFacts } from '../audit/audit-event.ts';
import type { AuditTrail } from '../audit/audit-trail.ts';
import type { EmbeddedFhirRequest, EmbeddedFhirResponse } from '../fhir/embedded/embedded-fhir-server.ts';
import { withDiagnostics } from '../fhir/with-diagnostics.ts';
import { authorizeInteraction, unauthorizedResult } from './authorize-interaction.ts';
import { classifyFhirRequest, type FhirRequestInteraction } from './classify-fhir-request.ts';
import type { KeyAccess } from './key-access.ts';
import { patientIdsOf, withinPatients } from './patient-compartment.ts';

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

/** The resources in an answer: the resource itself, or a Bundle's entries (a batch's, only those of GET entries). */
function answered(body: unknown, i: FhirRequestInteraction): Resource[] {
  if (!isResource(body) || body.resourceType === 'OperationOutcome') return [];
  if (body.resourceType !== 'Bundle' || i.subtype === 'create' || i.subtype === 'update') return [body];
  const entries = (body as Bundle).entry ?? [];
  return entries.flatMap((e, n) =>
    isResource(e.resource) && (!i.entries || i.entries[n]?.needs.every((x) => x === 'read' || x === 'search')) ? [e.resource] : [],
  );
}

/** What a search answered only because of `_include`/`_revinclude` (search.mode "include"). */
function includedOf(body: unknown): Set<Resource> {
  if (!isResource(body) || body.resourceType !== 'Bundle' || (body as Bundle).type !== 'searchset') return new Set();
  return new Set(
    ((body as Bundle).entry ?? []).flatMap((e) => (e.search?.mode === 'include' && isResource(e.resource) ? [e.resource] : [])),
  );
}

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
    keyId: o.access.id,
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

  const auth = authorizeInteraction(o.access, i);
  if (!auth.ok) return deny(auth.reason, auth.requestedPatients);
  // What an update or delete replaces: its patient goes in the record, and for patient/ scopes it must be one of
  // the key's, not only the new version.
  let before: Resource | undefined;
  if (i.id && (subtype === 'update' || subtype === 'delete' || subtype === 'patch')) {
    const current = await o.handle({ method: 'GET', url: `/${type}/${i.id}`, baseUrl: req.baseUrl });
    if (current.status === 200 && isResource(current.body)) before = current.body;
    if (auth.patients && before && !withinPatients(before, auth.patients)) {
      return deny(`API key "${o.access.id}" may not change this ${type}: it is not about one of the key's patients`, patientIdsOf(before));
    }
  }

  const res = await o.handle(req);
  const reads = res.status < 300 ? answered(res.body, i) : [];
  const touched = [...new Set([...auth.requestedPatients, ...(before ? patientIdsOf(before) : []), ...reads.flatMap(patientIdsOf)])];
  const readsOnly =
    subtype === 'read' || subtype === 'vread' || subtype === 'history-instance' || subtype.startsWith('search') || i.entries;
  if (readsOnly && reads.length > 0) {
    const search = subtype.startsWith('search');
    const included = search ? includedOf(res.body) : new Set<Resource>();
    const matches = reads.filter((r) => !included.has(r));
    const why = unauthorizedResult(o.access, search ? 'search' : 'read', matches, included);
    if (why) return deny(why, touched, [...target, ...reads.map((r) => `${r.resourceType}/${r.id}`)]);
  }
  const references =
    res.status < 300
      ? [...target, ...reads.map((r) => `${r.resourceType}/${r.id}`), ...(readsOnly && !i.entries ? [] : writtenReferences(res.body))]
      : target;
  await o.audit.record(facts({ status: res.status, references, patients: touched }));
  return res;
}
