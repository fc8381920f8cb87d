// Included resources through a key's scopes: a search with `_include` (search_medication_requests asks for the
// Medications) keeps what the key may see and leaves out the rest, instead of refusing the whole search, and what it
// keeps is audited as read. A patient-scoped key sees its patient's orders and the shared data they name (a
// Medication is no patient's), never another patient's.
import type { Resource } from '@medplum/fhirtypes';
import { describe, expect, it } from 'vitest';
import type { AuditFacts } from '../src/policies/audit/audit-event.ts';
import type { AuditTrail } from '../src/policies/audit/audit-trail.ts';
import type { KeyAccess } from '../src/policies/auth/key-access.ts';
import { createScopedFhirClient } from '../src/policies/auth/scoped-fhir-client.ts';
import { scopeGrantSchema } from '../src/policies/auth/smart-scope.ts';
import type { FhirClient, SearchResult } from '../src/fhir/client/fhir-client.ts';

const order: Resource = {
  resourceType: 'MedicationRequest',
  id: 'mr1',
  status: 'active',
  intent: 'order',
  subject: { reference: 'Patient/p1' },
  medicationReference: { reference: 'Medication/m1' },
};
const medication: Resource = { resourceType: 'Medication', id: 'm1', code: { text: 'Heparin' } };
const ownPatient: Resource = { resourceType: 'Patient', id: 'p1' };
const otherPatient: Resource = { resourceType: 'Patient', id: 'p2' };

// A unit: the server's answer is fixed, the subject is what the scoped client does with it.
const server = (included: Resource[]): FhirClient => ({
  baseUrl: 'http://fhir.test',
  readResource: async () => {
    throw new Error('unused');
  },
  createResource: async () => {
    throw new Error('unused');
  },
  executeBatch: async () => {
    throw new Error('unused');
  },
  searchResources: async <T extends Resource>() =>
    ({ resources: [order] as T[], included, total: 1, truncated: false, pages: 1 }) as SearchResult<T>,
});

function access(grant: string, patients: string[] = []): KeyAccess {
  const { scopes, flags } = scopeGrantSchema.parse(grant);
  return { id: 'k1', scopes, flags, patients: new Set(patients), audited: true };
}

function scoped(included: Resource[], key: KeyAccess) {
  const facts: AuditFacts[] = [];
  const audit: AuditTrail = { record: async (f) => (facts.push(f), 0) };
  return { client: createScopedFhirClient({ fhir: server(included), access: key, audit, tool: 'search_medication_requests' }), facts };
}

describe('scoped FHIR client: included resources', () => {
  it('a system-scoped key gets every included resource, audited as read', async () => {
    const { client, facts } = scoped([medication, ownPatient], access('system/*.rs'));
    const r = await client.searchResources('MedicationRequest', { patient: 'Patient/p1', _include: 'MedicationRequest:medication' });
    expect(r.included?.map((x) => x.id)).toEqual(['m1', 'p1']);
    expect(facts.at(-1)!.references).toEqual(expect.arrayContaining(['MedicationRequest/mr1', 'Medication/m1', 'Patient/p1']));
  });

  it('a patient-scoped key keeps its orders and the shared Medication; another patient is left out', async () => {
    const { client, facts } = scoped([medication, ownPatient, otherPatient], access('patient/*.rs', ['p1']));
    const r = await client.searchResources('MedicationRequest', { patient: 'Patient/p1', _include: 'MedicationRequest:medication' });
    expect(r.resources.map((x) => x.id)).toEqual(['mr1']);
    expect(r.included?.map((x) => `${x.resourceType}/${x.id}`)).toEqual(['Medication/m1', 'Patient/p1']);
    expect(facts.at(-1)!.status).toBe(200);
    expect(facts.at(-1)!.references).toEqual(['MedicationRequest/mr1', 'Medication/m1', 'Patient/p1']);
  });

  it('patient data of no listed patient stays out even when its type is scoped (an orphan Observation)', async () => {
    const orphan: Resource = { resourceType: 'Observation', id: 'o1', status: 'final', code: { text: 'x' } };
    const { client } = scoped([orphan, medication], access('patient/*.rs', ['p1']));
    const r = await client.searchResources('MedicationRequest', { patient: 'Patient/p1', _include: 'MedicationRequest:medication' });
    expect(r.included?.map((x) => `${x.resourceType}/${x.id}`)).toEqual(['Medication/m1']);
  });

  it('a patient-scoped key without a Medication scope does not get the Medication', async () => {
    const { client } = scoped([medication], access('patient/MedicationRequest.rs', ['p1']));
    const r = await client.searchResources('MedicationRequest', { patient: 'Patient/p1', _include: 'MedicationRequest:medication' });
    expect(r.included).toBeUndefined();
  });

  it('a key without a Medication scope does not get Medications through an include', async () => {
    const { client } = scoped([medication], access('system/MedicationRequest.rs'));
    const r = await client.searchResources('MedicationRequest', { patient: 'Patient/p1', _include: 'MedicationRequest:medication' });
    expect(r.included).toBeUndefined();
  });
});
