// The embedded server validates with Medplum's own validateResource; resource-verdict.mjs adds only the depth limit
// (one clear issue past MAX_DEPTH levels, before Medplum's recursion can overflow the stack).
import { validateResource } from '@medplum/core';
import type { Resource } from '@medplum/fhirtypes';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureFhirDefinitions } from '../../vocabulary/fhir/fhir-definitions.ts';
import { MAX_DEPTH, assertNotTooDeep, validateFhirResource, verdictOf } from './resource-verdict.mjs';

const nestedExtensions = (levels: number): Resource => {
  let e: Record<string, unknown> = { url: 'http://e.org/x', valueString: 'x' };
  for (let i = 0; i < levels; i++) e = { url: 'http://e.org/x', extension: [e] };
  return { resourceType: 'Patient', extension: [e] } as unknown as Resource;
};

const tooDeep = {
  resourceType: 'OperationOutcome',
  issue: [
    expect.objectContaining({
      severity: 'error',
      code: 'structure',
      details: { text: 'Nested too deeply: more than 128 levels of objects and arrays' },
    }),
  ],
};

beforeAll(() => ensureFhirDefinitions());

describe('resource verdicts', () => {
  it("are Medplum's up to MAX_DEPTH levels, and one clear issue past it", () => {
    expect(MAX_DEPTH).toBe(128);
    // 62 extension levels: 2 + 2 × 62 + 1 = 127 JSON levels, valid for both.
    expect(validateFhirResource(nestedExtensions(62))).toEqual(validateResource(nestedExtensions(62)));
    expect(() => assertNotTooDeep(nestedExtensions(62))).not.toThrow();
    for (const levels of [64, 700, 5000]) {
      expect(verdictOf(nestedExtensions(levels))).toEqual(tooDeep);
      expect(() => assertNotTooDeep(nestedExtensions(levels))).toThrow(/Nested too deeply/);
    }
  });

  it("pass Medplum's OperationOutcome through for an invalid resource, and undefined for a valid one", () => {
    const bad = { resourceType: 'Observation', status: 'final', code: {}, valueQuantity: { value: 'x' } } as unknown as Resource;
    let medplum: unknown;
    try {
      validateResource(structuredClone(bad));
    } catch (error) {
      medplum = (error as { outcome: unknown }).outcome;
    }
    expect(medplum).toMatchObject({ resourceType: 'OperationOutcome' });
    expect(verdictOf(bad)).toEqual(medplum);
    expect(verdictOf({ resourceType: 'Patient', name: [{ family: 'Test' }] } as Resource)).toBeUndefined();
  });
});
