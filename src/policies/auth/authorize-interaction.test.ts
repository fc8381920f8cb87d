// Unit tests of the scope decision: request classification (Medplum's routes → interactions and letters), the
// patients a search is limited to, and what a key's scopes allow, AuditEvent's append-only rule included.
import { describe, expect, it } from 'vitest';
import { authorizeInteraction } from './authorize-interaction.ts';
import { classifyFhirRequest } from './classify-fhir-request.ts';
import { decideAccess, plainKeyAccess, toolAccess, toolsMayWrite, type KeyAccess } from './key-access.ts';
import { searchPatientIds } from './patient-compartment.ts';
import { scopeGrantSchema } from './smart-scope.ts';

const keyWith = (scopes: string, patients: string[] = []): KeyAccess => ({
  id: 'k',
  ...scopeGrantSchema.parse(scopes),
  patients: new Set(patients),
  audited: true,
});

describe('classifyFhirRequest', () => {
  it.each([
    ['GET', '/metadata', 'capabilities', []],
    ['GET', '/Patient/p1', 'read', ['read']],
    ['GET', '/Patient/p1/_history', 'history-instance', ['read']],
    ['GET', '/Patient/p1/_history/2', 'vread', ['read']],
    ['GET', '/Observation?patient=p1', 'search-type', ['search']],
    ['POST', '/Observation/_search', 'search-type', ['search']],
    ['GET', '/?_type=Patient', 'search-system', ['search']],
    ['POST', '/Observation', 'create', ['create']],
    ['PUT', '/Observation/o1', 'update', ['update']],
    ['PUT', '/Observation?identifier=x', 'update', ['update', 'search']],
    ['PATCH', '/Observation/o1', 'patch', ['update']],
    ['DELETE', '/Observation/o1', 'delete', ['delete']],
    ['DELETE', '/Observation?code=x', 'delete', ['delete', 'search']],
    ['POST', '/$graphql', 'operation', ['create', 'read', 'update', 'delete', 'search']],
    ['GET', '/Patient/p1/$everything', 'search-system', ['read', 'search']],
    ['POST', '/Patient/p1/$everything', 'operation', ['create', 'read', 'update', 'delete', 'search']],
    ['GET', '/patient/p1', 'operation', ['create', 'read', 'update', 'delete', 'search']],
  ])('%s %s → %s', (method, url, subtype, needs) => {
    expect(classifyFhirRequest({ method, url })).toMatchObject({ subtype, needs });
  });
  it('a conditional create also searches', () => {
    expect(classifyFhirRequest({ method: 'POST', url: '/Patient', headers: { 'If-None-Exist': 'identifier=x' } }).needs).toEqual([
      'create',
      'search',
    ]);
  });
  it('a bundle classifies its entries', () => {
    const body = {
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [{ request: { method: 'DELETE', url: 'Patient/p1' } }, { request: { method: 'GET', url: 'Observation?patient=p1' } }],
    };
    expect(classifyFhirRequest({ method: 'POST', url: '', body })).toMatchObject({
      subtype: 'transaction',
      entries: [{ subtype: 'delete' }, { subtype: 'search-type' }],
    });
  });
});

describe('searchPatientIds', () => {
  it.each([
    ['Observation', [['patient', 'p1']], ['p1']],
    ['Observation', [['patient', 'Patient/p1,Patient/p2']], ['p1', 'p2']],
    ['Observation', [['subject', 'Patient/p1']], ['p1']],
    ['Observation', [['subject:Patient', 'p1']], ['p1']],
    ['Patient', [['_id', 'p1']], ['p1']],
    [
      'Observation',
      [
        ['patient', 'p1'],
        ['code', 'x'],
      ],
      ['p1'],
    ],
    ['Observation', [['code', 'x']], undefined],
    ['Observation', [['subject', 'p1']], undefined],
    ['Observation', [['patient', 'Group/g1']], undefined],
    ['Observation', [['_id', 'p1']], undefined],
  ] as const)('%s %j → %j', (type, pairs, ids) => {
    expect(searchPatientIds(type, pairs)).toEqual(ids);
  });
});

describe('decideAccess and authorizeInteraction', () => {
  it('system scopes allow everywhere; patient scopes only within the list', () => {
    expect(decideAccess(keyWith('system/Observation.rs'), 'read', 'Observation')).toEqual({ allowed: true });
    expect(decideAccess(keyWith('patient/*.rs', ['p1']), 'search', 'Observation')).toEqual({ allowed: true, patients: new Set(['p1']) });
    expect(decideAccess(keyWith('system/Observation.rs'), 'read', 'Patient')).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('system/Patient.r'),
    });
    // A system scope wins over a patient scope for the same type.
    expect(decideAccess(keyWith('patient/*.rs system/Patient.r', ['p1']), 'read', 'Patient')).toEqual({ allowed: true });
  });
  it('AuditEvent: readable by wildcard, never updated or deleted, created only by a scope naming it', () => {
    const all = keyWith('system/*.cruds');
    expect(decideAccess(all, 'search', 'AuditEvent').allowed).toBe(true);
    expect(decideAccess(all, 'create', 'AuditEvent').allowed).toBe(false);
    expect(decideAccess(keyWith('system/AuditEvent.c'), 'create', 'AuditEvent').allowed).toBe(true);
    expect(decideAccess(keyWith('system/AuditEvent.cruds'), 'delete', 'AuditEvent')).toMatchObject({
      allowed: false,
      reason: 'AuditEvent records are append-only',
    });
  });
  it('a patient-scoped create must be about a listed patient', () => {
    const ward = keyWith('patient/Observation.c', ['p1']);
    const create = (subject: string) =>
      authorizeInteraction(ward, {
        subtype: 'create',
        needs: ['create'],
        resourceTypes: ['Observation'],
        wholeServer: false,
        resource: { resourceType: 'Observation', subject: { reference: subject } },
      });
    expect(create('Patient/p1').ok).toBe(true);
    expect(create('Patient/p2')).toMatchObject({ ok: false, requestedPatients: ['p2'] });
  });
  it('operations need system/*.cruds', () => {
    expect(authorizeInteraction(keyWith('system/*.rs'), classifyFhirRequest({ method: 'POST', url: '/$graphql' }))).toMatchObject({
      ok: false,
      reason: expect.stringContaining('operations'),
    });
    expect(authorizeInteraction(keyWith('system/*.cruds'), classifyFhirRequest({ method: 'POST', url: '/$graphql' })).ok).toBe(true);
  });
  it('plain keys read everything and write only with FHIR_WRITE_TOOLS; tools write only with tools:write', () => {
    expect(decideAccess(plainKeyAccess('p', { writes: false }), 'create', 'Patient').allowed).toBe(false);
    expect(decideAccess(plainKeyAccess('p', { writes: true }), 'delete', 'Patient').allowed).toBe(true);
    const noToolWrites = keyWith('system/*.cruds chat');
    expect(toolsMayWrite(noToolWrites)).toBe(false);
    expect(decideAccess(toolAccess(noToolWrites), 'create', 'Observation').allowed).toBe(false);
    expect(decideAccess(toolAccess(noToolWrites), 'read', 'Observation').allowed).toBe(true);
    expect(toolsMayWrite(keyWith('system/Observation.c tools:write'))).toBe(true);
  });
});
