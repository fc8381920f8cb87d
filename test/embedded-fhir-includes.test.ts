// The embedded server's _include, _revinclude (with :iterate) and Patient/$everything on MIMIC-shaped data
// (fixtures/mimic, generated), and what its CapabilityStatement says about them. Included resources come once, as
// search.mode "include", never count towards total or paging, and never repeat a match.
import type { Bundle, CapabilityStatement, Medication, MedicationRequest, Observation, Resource } from '@medplum/fhirtypes';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateMimicDemo } from '../fixtures/mimic/generate-mimic-demo.ts';
import { createEmbeddedFhirServer, type EmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';

const files = generateMimicDemo({ patients: 2, seed: 11 });
const all = [...files.values()].flat();
const of = <T extends Resource>(type: string) => all.filter((r) => r.resourceType === type) as T[];
const [pid, other] = files.get('MimicPatient.ndjson.gz')!.map((p) => p.id!);
const key = (r: Resource) => `${r.resourceType}/${r.id}`;

let server: EmbeddedFhirServer;
beforeAll(async () => {
  server = await createEmbeddedFhirServer({ baseUrl: 'http://gw.test/fhir' });
  await server.loadBundles([{ resourceType: 'Bundle', type: 'collection', entry: all.map((resource) => ({ resource })) }]);
});

async function search(url: string): Promise<Bundle> {
  const res = await server.handle({ method: 'GET', url });
  expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
  return res.body as Bundle;
}
const mode = (b: Bundle, m: 'match' | 'include') => (b.entry ?? []).filter((e) => e.search?.mode === m).map((e) => key(e.resource!));

describe('embedded FHIR server: _include and _revinclude', () => {
  it('MedicationRequest:medication includes each referenced Medication once, outside total and paging', async () => {
    const orders = of<MedicationRequest>('MedicationRequest').filter((m) => m.subject?.reference === `Patient/${pid}`);
    const page = await search(`/MedicationRequest?patient=Patient/${pid}&_count=20&_sort=_id&_include=MedicationRequest:medication`);
    expect(page.total).toBe(orders.length);
    const matches = mode(page, 'match');
    expect(matches).toHaveLength(20);
    const byKey = new Map(orders.map((m) => [key(m), m]));
    const wanted = new Set(matches.map((k) => byKey.get(k)!.medicationReference?.reference).filter(Boolean));
    expect(new Set(mode(page, 'include'))).toEqual(wanted);
    expect(mode(page, 'include')).toHaveLength(wanted.size);
    expect(page.link?.find((l) => l.relation === 'next')?.url).toContain('_include=MedicationRequest%3Amedication');
  });

  it(':iterate follows a mix to its ingredients; a target type narrows an include', async () => {
    const mix = of<Medication>('Medication').find((m) => m.ingredient)!;
    const order = of<MedicationRequest>('MedicationRequest').find((m) => m.medicationReference?.reference === key(mix))!;
    const plain = await search(`/MedicationRequest?_id=${order.id}&_include=MedicationRequest:medication`);
    expect(mode(plain, 'include')).toEqual([key(mix)]);
    const iterated = await search(
      `/MedicationRequest?_id=${order.id}&_include=MedicationRequest:medication&_include:iterate=Medication:ingredient`,
    );
    expect(new Set(mode(iterated, 'include'))).toEqual(new Set([key(mix), ...mix.ingredient!.map((i) => i.itemReference!.reference!)]));
    const subjects = await search(`/MedicationRequest?_id=${order.id}&_include=MedicationRequest:subject:Patient`);
    expect(mode(subjects, 'include')).toEqual([order.subject!.reference]);
    const none = await search(`/MedicationRequest?_id=${order.id}&_include=MedicationRequest:subject:Group`);
    expect(mode(none, 'include')).toEqual([]);
  });

  it('several includes from the tools: patient, encounter, location', async () => {
    const page = await search(`/Encounter?patient=Patient/${pid}&_include=Encounter:location&_include=Encounter:patient&_count=100`);
    const included = mode(page, 'include');
    expect(included).toContain(`Patient/${pid}`);
    expect(included.filter((k) => k.startsWith('Location/')).length).toBeGreaterThan(0);
    expect(included.some((k) => k === `Patient/${other}`)).toBe(false);
    const conditions = await search(`/Condition?patient=Patient/${pid}&_include=Condition:encounter&_count=5`);
    expect(mode(conditions, 'include').every((k) => k.startsWith('Encounter/'))).toBe(true);
  });

  it('_revinclude finds what points at the matches (indexed and scanned parameters alike)', async () => {
    const med = of<Medication>('Medication').find((m) => !m.ingredient)!;
    const orders = of<MedicationRequest>('MedicationRequest').filter((m) => m.medicationReference?.reference === key(med));
    const page = await search(`/Medication?_id=${med.id}&_revinclude=MedicationRequest:medication`);
    expect(new Set(mode(page, 'include'))).toEqual(new Set(orders.map(key)));
    expect(page.total).toBe(1);
    const patient = await search(`/Patient?_id=${pid}&_revinclude=Encounter:subject`);
    expect(mode(patient, 'include').length).toBe(
      of('Encounter').filter((e) => (e as { subject?: { reference?: string } }).subject?.reference === `Patient/${pid}`).length,
    );
  });

  it('microbiology: a test revincludes its organisms (derived-from), and :iterate their susceptibilities, each once', async () => {
    const tests = of<Observation>('Observation').filter((o) => o.meta?.profile?.[0]?.endsWith('micro-test') && o.hasMember?.length);
    expect(tests.length).toBeGreaterThan(0);
    const t = tests[0];
    const orgs = of<Observation>('Observation').filter((o) => o.derivedFrom?.some((d) => d.reference === key(t)));
    const page = await search(`/Observation?_id=${t.id}&_revinclude=Observation:derived-from`);
    expect(new Set(mode(page, 'include'))).toEqual(new Set(orgs.map(key)));
    const deep = await search(`/Observation?_id=${t.id}&_revinclude:iterate=Observation:derived-from`);
    const susc = of<Observation>('Observation').filter((o) => o.derivedFrom?.some((d) => orgs.some((g) => d.reference === key(g))));
    expect(new Set(mode(deep, 'include'))).toEqual(new Set([...orgs, ...susc].map(key)));
    // The cycle (organism hasMember → susceptibility → derived-from organism) ends: nothing twice, the match never.
    const cyclic = await search(
      `/Observation?_id=${t.id}&_include:iterate=Observation:has-member&_revinclude:iterate=Observation:derived-from`,
    );
    const included = mode(cyclic, 'include');
    expect(new Set(included).size).toBe(included.length);
    expect(included).not.toContain(key(t));
  });

  it('refuses what it cannot do with a 400 naming the parameter', async () => {
    for (const [url, says] of [
      ['/MedicationRequest?_include=*', /'\*' is not supported/],
      ['/MedicationRequest?_include=MedicationRequest:code', /not a reference parameter/],
      ['/MedicationRequest?_include=Observation:subject', /MedicationRequest is searched/],
      ['/Medication?_revinclude=Observation:encounter', /never points at Medication/],
      ['/MedicationRequest?_include:recurse=MedicationRequest:medication', /not supported/],
    ] as const) {
      const res = await server.handle({ method: 'GET', url });
      expect(res.status, url).toBe(400);
      expect(JSON.stringify(res.body), url).toMatch(says);
    }
  });
});

describe('embedded FHIR server: Patient/$everything', () => {
  const everything = async (query: string) => search(`/Patient/${pid}/$everything${query}`);
  const compartment = all.filter((r) => (r as { subject?: { reference?: string } }).subject?.reference === `Patient/${pid}`);

  it('pages through the patient first, the compartment, then what it references, each once', async () => {
    const seen: string[] = [];
    let url: string | undefined = `/Patient/${pid}/$everything?_count=250`;
    let total: number | undefined;
    while (url) {
      const page = await search(url);
      total ??= page.total;
      seen.push(...mode(page, 'match'));
      const next = page.link?.find((l) => l.relation === 'next')?.url;
      url = next?.replace('http://gw.test/fhir', '');
    }
    expect(seen[0]).toBe(`Patient/${pid}`);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe(total);
    for (const r of compartment) expect(seen).toContain(key(r));
    expect(seen).not.toContain(`Patient/${other}`);
    expect(seen.filter((k) => k.startsWith('Medication/')).length).toBeGreaterThan(0);
    expect(seen.some((k) => k.startsWith('Location/'))).toBe(true);
  });

  it('_type narrows (the patient stays first), _since filters by lastUpdated, unknown parameters are a 400', async () => {
    const typed = await everything('?_type=Encounter,Condition&_count=1000');
    expect(mode(typed, 'match')[0]).toBe(`Patient/${pid}`);
    expect(
      new Set(
        mode(typed, 'match')
          .slice(1)
          .map((k) => k.split('/')[0]),
      ),
    ).toEqual(new Set(['Encounter', 'Condition']));
    expect((await everything('?_since=2999-01-01T00:00:00Z')).total).toBe(1);
    for (const q of ['?start=2020', '?_type=Unicorn', '?_count=ten', '?_since=yesterday']) {
      expect((await server.handle({ method: 'GET', url: `/Patient/${pid}/$everything${q}` })).status, q).toBe(400);
    }
    expect((await server.handle({ method: 'GET', url: '/Patient/no-such/$everything' })).status).toBe(404);
  });

  it('the CapabilityStatement lists the operation and the include paths', async () => {
    const cs = (await server.handle({ method: 'GET', url: '/metadata' })).body as CapabilityStatement;
    const rest = (type: string) => cs.rest![0].resource!.find((r) => r.type === type)!;
    expect(rest('Patient').operation).toContainEqual(expect.objectContaining({ name: 'everything' }));
    expect(rest('MedicationRequest').searchInclude).toEqual(
      expect.arrayContaining(['MedicationRequest:medication', 'MedicationRequest:encounter']),
    );
    expect(rest('Medication').searchRevInclude).toContain('MedicationRequest:medication');
    expect(rest('Observation').searchRevInclude).toContain('Observation:derived-from');
  });
});
