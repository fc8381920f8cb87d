// Requests to the embedded FHIR server at /fhir: searches with odd parameters, modifiers and prefixes; reads and
// writes with odd ids in the path; creates, updates, patches and bundles with odd bodies.
import fc from 'fast-check';
import { mutated, oddValue, PROTO_KEYS } from './mutate-json.ts';
import { deepNesting, serialize } from './raw-json.ts';

export interface FhirCase {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  /** Below /fhir, query string included, already encoded (or deliberately mis-encoded). */
  path: string;
  body: string | undefined;
  contentType: string | undefined;
  authorized: boolean;
}

const TYPES = [
  'Patient',
  'Observation',
  'Condition',
  'MedicationRequest',
  'Encounter',
  'AllergyIntolerance',
  'Bundle',
  'OperationOutcome',
  'Binary',
];
const ODD_TYPES = [
  'patient',
  'Foo',
  '',
  '%00',
  '..',
  'Patient%2F..',
  'Patient;x',
  '$everything',
  '_history',
  '_search',
  'metadata',
  ...PROTO_KEYS,
];
const ODD_IDS = [
  '__proto__',
  'constructor',
  'prototype',
  'a'.repeat(64),
  'a'.repeat(65),
  '..',
  '.',
  '-',
  '%2e%2e',
  'x%00',
  '%zz',
  'é',
  '😀',
  '%20',
  'a%2Fb',
  'S1000001',
  '$validate',
  '_history',
];

const PARAMS = [
  'name',
  'family',
  'given',
  'birthdate',
  'gender',
  'identifier',
  'patient',
  'subject',
  'code',
  'category',
  'date',
  'status',
  'value-quantity',
  'clinical-status',
  'authoredon',
  'encounter',
  '_id',
  '_lastUpdated',
  '_count',
  '_offset',
  '_sort',
  '_elements',
  '_summary',
  '_total',
  '_include',
  '_revinclude',
  '_has:Observation:patient:code',
  '_format',
  '_pretty',
  'unknown-param',
  ...PROTO_KEYS,
];
const MODIFIERS = ['', '', '', ':exact', ':contains', ':missing', ':not', ':above', ':below', ':text', ':Patient', ':of-type', ':bogus'];
const PREFIXES = ['', '', 'eq', 'ne', 'gt', 'lt', 'ge', 'le', 'sa', 'eb', 'ap', 'xx'];
const VALUES = [
  '',
  'x',
  '2024-05-01',
  '2024',
  '2024-13-45',
  '2024-05-01T08:00:00Z',
  '2024-05-01T25:00',
  '1e308',
  '-1e308',
  '1e999',
  '-0',
  'NaN',
  'Infinity',
  '9007199254740993',
  '0',
  '-1',
  '1000001',
  'true',
  'false',
  'http://loinc.org|2823-3',
  '|2823-3',
  'http://loinc.org|',
  '|',
  '||',
  ',',
  'a,b,,c',
  '5.4|http://unitsofmeasure.org|mmol/L',
  'Patient/S1000001',
  'Patient/',
  'S1000001',
  '-date,_id',
  'name,-birthdate',
  '__proto__',
  'constructor',
  'x'.repeat(5000),
  '\u0000',
  'é',
  '😀',
  "'",
  '"',
  '\\',
];
/** Spliced in unencoded: bad percent escapes and separators a lax parser might trip over. */
const RAW_QUERY_BITS = ['%', '%zz', '%E0%A4%A', '%C0%80', '&&', '==', '=&=', '&_count', '%26', '%3D', '#frag', '?', ';', '+', '%2B'];

const query = fc
  .array(
    fc.oneof(
      {
        weight: 12,
        arbitrary: fc
          .tuple(fc.constantFrom(...PARAMS), fc.constantFrom(...MODIFIERS), fc.constantFrom(...PREFIXES), fc.constantFrom(...VALUES))
          .map(([p, m, x, v]) => `${encodeURIComponent(p + m)}=${encodeURIComponent(x + v)}`),
      },
      { weight: 1, arbitrary: fc.constantFrom(...RAW_QUERY_BITS) },
    ),
    { maxLength: 5 },
  )
  .map((parts) => (parts.length ? `?${parts.join('&')}` : ''));

/** Searches a client would send, so the fuzz reaches the matching code and not only the parameter checks. */
function plausibleSearch(patientIds: string[]): fc.Arbitrary<string> {
  const patient = fc.constantFrom(...patientIds);
  const date = fc
    .tuple(fc.constantFrom('', 'ge', 'le', 'gt', 'lt', 'eq'), fc.constantFrom('2020', '2023-06', '2024-05-01', '2024-05-01T08:00:00Z'))
    .map(([p, d]) => p + d);
  const byType: Array<[string, Record<string, fc.Arbitrary<string>>]> = [
    [
      'Patient',
      {
        name: fc.constantFrom('Peter', 'a', 'Ma'),
        family: fc.constantFrom('Smith', 'S'),
        birthdate: date,
        gender: fc.constantFrom('male', 'female'),
        _id: patient,
        _count: fc.constantFrom('1', '10'),
      },
    ],
    [
      'Observation',
      {
        patient: patient.map((i) => `Patient/${i}`),
        subject: patient.map((i) => `Patient/${i}`),
        code: fc.constantFrom('http://loinc.org|2823-3', '2823-3', '8867-4'),
        category: fc.constantFrom('laboratory', 'vital-signs'),
        date,
        'value-quantity': fc.constantFrom('gt5', 'lt3.5', 'ge0', '5.4|http://unitsofmeasure.org|mmol/L'),
        _sort: fc.constantFrom('-date', 'date,_id', '-_lastUpdated'),
        _count: fc.constantFrom('1', '5', '0'),
        _summary: fc.constantFrom('count', 'false'),
        _total: fc.constantFrom('accurate', 'none'),
      },
    ],
    [
      'Condition',
      {
        patient: patient.map((i) => `Patient/${i}`),
        'clinical-status': fc.constantFrom('active', 'resolved'),
        code: fc.constantFrom('44054006', 'http://snomed.info/sct|44054006'),
      },
    ],
    [
      'MedicationRequest',
      {
        patient: patient.map((i) => `Patient/${i}`),
        status: fc.constantFrom('active', 'stopped'),
        intent: fc.constantFrom('order', 'plan'),
        authoredon: date,
      },
    ],
    ['Encounter', { patient: patient.map((i) => `Patient/${i}`), date, status: fc.constantFrom('finished') }],
  ];
  return fc.oneof(
    ...byType.map(([type, params]) =>
      fc.record(params, { requiredKeys: [] }).map((q) => {
        const query = new URLSearchParams(Object.entries(q) as Array<[string, string]>).toString();
        return `/${type}${query ? `?${query}` : ''}`;
      }),
    ),
  );
}

const id = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^[A-Za-z0-9\-.]{1,64}$/) },
  { weight: 2, arbitrary: fc.constantFrom(...ODD_IDS) },
);
const type = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...TYPES) }, { weight: 1, arbitrary: fc.constantFrom(...ODD_TYPES) });

function path(patientIds: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: plausibleSearch(patientIds) },
    { weight: 1, arbitrary: fc.constantFrom(...patientIds).map((i) => `/Patient/${i}`) },
    { weight: 6, arbitrary: fc.tuple(type, query).map(([t, q]) => `/${t}${q}`) },
    { weight: 3, arbitrary: fc.tuple(type, id).map(([t, i]) => `/${t}/${i}`) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          type,
          id,
          fc.constantFrom('/_history', '/_history/1', '/_history/0', '/_history/x', '/$everything', '/$validate', '/extra/segments'),
        )
        .map(([t, i, s]) => `/${t}/${i}${s}`),
    },
    { weight: 1, arbitrary: fc.tuple(type, query).map(([t, q]) => `/${t}/_search${q}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        '/',
        '/metadata',
        '/metadata?_format=xml',
        '//Patient',
        '/Patient/',
        '/Patient//x',
        '/_history',
        '/$export',
      ),
    },
  );
}

const patient = fc.record(
  {
    resourceType: fc.constant('Patient'),
    id: id,
    name: fc.array(
      fc.record(
        { family: fc.string({ maxLength: 10 }), given: fc.array(fc.string({ maxLength: 10 }), { maxLength: 2 }) },
        { requiredKeys: [] },
      ),
      { maxLength: 2 },
    ),
    gender: fc.constantFrom('male', 'female', 'other', 'unknown', 'robot'),
    birthDate: fc.constantFrom('1970-01-01', '1970', '1970-13-01', 'yesterday'),
  },
  { requiredKeys: ['resourceType'] },
);
const observation = fc.record(
  {
    resourceType: fc.constant('Observation'),
    status: fc.constantFrom('final', 'preliminary', 'bogus'),
    code: fc.constant({ coding: [{ system: 'http://loinc.org', code: '2823-3' }] }),
    subject: fc.constantFrom(
      { reference: 'Patient/S1000001' },
      { reference: 'Patient/' },
      { reference: '#x' },
      { reference: 'urn:uuid:x' },
      {},
    ),
    valueQuantity: fc.record({ value: fc.oneof(fc.double(), fc.constant(1e308)), unit: fc.constant('mmol/L') }),
    effectiveDateTime: fc.constantFrom('2024-05-01T08:00:00Z', '2024-05-01', 'now'),
  },
  { requiredKeys: ['resourceType'] },
);
const resource = fc.oneof(patient, observation);
const bundle = fc
  .record({
    type: fc.constantFrom('transaction', 'batch', 'collection', 'searchset', 'bogus'),
    entries: fc.array(
      fc.record(
        {
          fullUrl: fc.constantFrom('urn:uuid:1', 'urn:uuid:1', 'Patient/x', ''),
          request: fc.record(
            {
              method: fc.constantFrom('POST', 'PUT', 'GET', 'DELETE', 'PATCH', 'HEAD', 'bogus'),
              url: fc.oneof(
                path(['S1000001']).map((p) => p.slice(1)),
                fc.constant(''),
              ),
            },
            { requiredKeys: [] },
          ),
          resource,
        },
        { requiredKeys: [] },
      ),
      { maxLength: 4 },
    ),
  })
  .map((b) => ({ resourceType: 'Bundle', type: b.type, entry: b.entries }));
const jsonPatch = fc.array(
  fc.record(
    {
      op: fc.constantFrom('add', 'replace', 'remove', 'test', 'move', 'bogus'),
      path: fc.constantFrom('/gender', '/name/0', '/id', '/resourceType', '/__proto__/polluted', '', '/'),
      value: oddValue,
    },
    { requiredKeys: ['op'] },
  ),
  { maxLength: 3 },
);

const bodyText = fc.oneof(
  { weight: 4, arbitrary: resource.map(serialize) },
  { weight: 4, arbitrary: mutated(resource).map(serialize) },
  { weight: 2, arbitrary: bundle.map(serialize) },
  { weight: 2, arbitrary: mutated(bundle).map(serialize) },
  { weight: 1, arbitrary: jsonPatch.map(serialize) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(serialize) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      '{',
      'null',
      '[]',
      '"x"',
      'NaN',
      '{"resourceType":"Patient","name":' + serialize(deepNesting(5000, 'array')) + '}',
    ),
  },
);

/** `patientIds`: ids in the store, so reads and searches find something. */
export function fhirCase(patientIds: string[]): fc.Arbitrary<FhirCase> {
  return fc
    .record({
      method: fc.constantFrom<FhirCase['method']>('GET', 'GET', 'GET', 'GET', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH'),
      path: path(patientIds),
      body: bodyText,
      contentType: fc.constantFrom(
        'application/fhir+json',
        'application/json',
        'application/json-patch+json',
        'application/x-www-form-urlencoded',
        'text/plain',
        undefined,
      ),
      authorized: fc.oneof({ weight: 30, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    })
    .map((c) => (c.method === 'GET' || c.method === 'DELETE' ? { ...c, body: undefined, contentType: undefined } : c));
}
