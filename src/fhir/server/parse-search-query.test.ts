import { OperationOutcomeError } from '@medplum/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureFhirDefinitions } from '../../vocabulary/fhir/fhir-definitions.ts';
import { parseSearchQuery, splitSearchValues } from './parse-search-query.ts';

const LIMITS = { defaultPageSize: 20, maxPageSize: 100 };
const parse = (resourceType: string, query: string) => parseSearchQuery(resourceType, new URLSearchParams(query), LIMITS);

/** The 400 a query gets: its diagnostics and the parameter it names. */
function rejection(resourceType: string, query: string): { text: string; expression: string[] } {
  try {
    parse(resourceType, query);
  } catch (err) {
    expect(err).toBeInstanceOf(OperationOutcomeError);
    const issue = (err as OperationOutcomeError).outcome.issue[0];
    expect(issue).toMatchObject({ severity: 'error', code: 'invalid' });
    return { text: issue.details?.text ?? '', expression: issue.expression ?? [] };
  }
  throw new Error(`expected ${resourceType}?${query} to be rejected`);
}

beforeAll(() => ensureFhirDefinitions());

describe('splitSearchValues', () => {
  it('splits on commas, keeps backslash-escaped ones, and unescapes', () => {
    expect(splitSearchValues('a,b\\,c,d')).toEqual(['a', 'b,c', 'd']);
    expect(splitSearchValues('x\\\\y')).toEqual(['x\\y']);
    expect(splitSearchValues('')).toEqual(['']);
    expect(splitSearchValues('a,')).toEqual(['a', '']);
  });
});

describe('parseSearchQuery', () => {
  it('defaults: first page of the default size, accurate total, no filters', () => {
    expect(parse('Patient', '')).toMatchObject({
      resourceType: 'Patient',
      filters: [],
      sort: [],
      count: 20,
      offset: 0,
      total: 'accurate',
      countOnly: false,
      linkParams: [],
    });
  });

  it('parses filters with alternatives, date and quantity prefixes, paging and sort', () => {
    const q = parse(
      'Observation',
      'code=http://loinc.org|4548-4,K&date=ge2020-01-01&value-quantity=lt5.4|http://unitsofmeasure.org|mg&_count=500&_offset=40&_sort=-date,code',
    );
    expect(q.filters.map((f) => ({ code: f.code, type: f.param.type, modifier: f.modifier, values: f.values }))).toEqual([
      {
        code: 'code',
        type: 'token',
        modifier: undefined,
        values: [
          { prefix: 'eq', value: 'http://loinc.org|4548-4' },
          { prefix: 'eq', value: 'K' },
        ],
      },
      { code: 'date', type: 'date', modifier: undefined, values: [{ prefix: 'ge', value: '2020-01-01' }] },
      {
        code: 'value-quantity',
        type: 'quantity',
        modifier: undefined,
        values: [{ prefix: 'lt', value: '5.4|http://unitsofmeasure.org|mg' }],
      },
    ]);
    expect(q.count).toBe(100); // capped at maxPageSize
    expect(q.offset).toBe(40);
    expect(q.sort.map((s) => [s.code, s.descending])).toEqual([
      ['date', true],
      ['code', false],
    ]);
    // Links carry the query as understood (the capped _count) and never _offset, which each link sets itself.
    expect(q.linkParams).toEqual([
      ['code', 'http://loinc.org|4548-4,K'],
      ['date', 'ge2020-01-01'],
      ['value-quantity', 'lt5.4|http://unitsofmeasure.org|mg'],
      ['_count', '100'],
      ['_sort', '-date,code'],
    ]);
  });

  it('a date without a known prefix is eq; a value that only looks like a prefix is checked as a date', () => {
    expect(parse('Patient', 'birthdate=1981-10-21').filters[0].values).toEqual([{ prefix: 'eq', value: '1981-10-21' }]);
    expect(rejection('Patient', 'birthdate=xx1981').expression).toEqual(['birthdate']);
  });

  it('accepts the modifiers it can evaluate exactly, including a reference’s target type', () => {
    const q = parse('Observation', 'subject:Patient=S1000001&code:text=glucose&value-quantity:missing=false');
    expect(q.filters.map((f) => [f.code, f.modifier])).toEqual([
      ['subject', 'Patient'],
      ['code', 'text'],
      ['value-quantity', 'missing'],
    ]);
    expect(parse('Patient', 'family:exact=Iwasaki').filters[0]).toMatchObject({
      code: 'family',
      modifier: 'exact',
      values: [{ prefix: 'eq', value: 'Iwasaki' }],
    });
  });

  it('_summary=count, _total, _elements, _format and _pretty', () => {
    const q = parse('Patient', '_summary=count&_total=none&_elements=id,name&_format=json&_pretty=true');
    expect(q).toMatchObject({ countOnly: true, total: 'none', elements: ['id', 'name'], filters: [] });
    expect(parse('Patient', '_summary=false').countOnly).toBe(false);
  });

  it('_include and _revinclude, with :iterate and a target type', () => {
    const q = parse(
      'MedicationRequest',
      '_include=MedicationRequest:medication&_include=MedicationRequest:subject:Patient&_revinclude:iterate=Observation:derived-from',
    );
    expect(q.includes.map((r) => [r.sourceType, r.code, r.targetType, r.iterate])).toEqual([
      ['MedicationRequest', 'medication', undefined, false],
      ['MedicationRequest', 'subject', 'Patient', false],
    ]);
    expect(q.revIncludes.map((r) => [r.sourceType, r.code, r.iterate])).toEqual([['Observation', 'derived-from', true]]);
    expect(q.linkParams.map(([k]) => k)).toEqual(['_include', '_include', '_revinclude:iterate']);
  });

  it('a parameter with an empty value constrains nothing and stays out of the links', () => {
    expect(parse('Patient', 'name=&family=Iwasaki')).toMatchObject({ filters: [{ code: 'family' }], linkParams: [['family', 'Iwasaki']] });
  });

  it.each([
    ['Observation', 'foo=1', 'foo', /Unknown search parameter 'foo'/],
    ['Observation', 'subject.name=x', 'subject.name', /Chained/],
    ['Observation', 'code:fuzzy=x', 'code:fuzzy', /Unsupported modifier ':fuzzy'/],
    ['Observation', 'subject:Medication=x', 'subject:Medication', /Unsupported modifier/],
    ['Observation', 'code-value-quantity=x', 'code-value-quantity', /composite/],
    ['Patient', 'birthdate=2020-13-45', 'birthdate', /Invalid date value '2020-13-45'/],
    ['Patient', 'birthdate:missing=maybe', 'birthdate:missing', /true or false/],
    ['Observation', 'value-quantity=abc', 'value-quantity', /Invalid quantity value/],
    ['Patient', '_include=*', '_include', /'\*' is not supported/],
    ['Patient', '_include=Patient:nonsense', '_include', /unknown search parameter 'nonsense'/],
    ['Patient', '_include=Patient:name', '_include', /not a reference parameter/],
    ['Patient', '_include=Observation:subject', '_include', /Patient is searched, not Observation/],
    ['MedicationRequest', '_include=MedicationRequest:medication:Patient', '_include', /cannot point at Patient/],
    ['Medication', '_revinclude=Observation:encounter', '_revinclude', /never points at Medication/],
    ['Patient', '_include:recurse=Patient:organization', '_include:recurse', /not supported/],
    ['Patient', '_has:Observation:subject:code=x', '_has:Observation:subject:code', /not supported/],
    ['Patient', '_count=ten', '_count', /non-negative integer/],
    ['Patient', '_offset=-1', '_offset', /non-negative integer/],
    ['Patient', '_sort=-nonsense', '_sort', /Cannot sort Patient by 'nonsense'/],
    ['Patient', '_total=exact', '_total', /Invalid _total/],
    ['Patient', '_summary=true', '_summary', /not supported/],
    ['Patient', '_elements=id,na-me', '_elements', /Invalid _elements/],
    ['Patient', '_format=xml', '_format', /only JSON/],
    ['Patient', '_bogus=1', '_bogus', /not supported/],
  ])('%s?%s → 400 naming %s', (resourceType, query, parameter, message) => {
    const r = rejection(resourceType, query);
    expect(r.expression).toEqual([parameter]);
    expect(r.text).toMatch(message);
  });
});
