// A FHIR REST request (method, path, query, body) → the interaction it is and the scope letters it needs,
// following Medplum's route table and SMART v2: read covers vread and instance history, update covers patch,
// and conditional update/delete/patch or If-None-Exist also search. Anything else (operations, $graphql, unknown
// paths) counts as an operation, which only a key with system/*.cruds may call.
import type { AuditSubtype } from '../audit/audit-event.ts';
import type { FhirInteraction } from './smart-scope.ts';
import { searchBodyPairs } from '../../vocabulary/fhir/search-body-pairs.ts';

export interface FhirRequestInteraction {
  subtype: AuditSubtype | 'capabilities';
  needs: FhirInteraction[];
  /** The types the needs apply to: one, `*` for operations, or a system search's `_type` list. */
  resourceTypes: string[];
  id?: string;
  /** A type search's parameters (URL query and form body). */
  searchPairs?: Array<[string, string]>;
  /** Not open to patient/ scopes: its reach cannot be checked against a patient list. */
  wholeServer: boolean;
  /** A batch or transaction: its entries, in order. */
  entries?: FhirRequestInteraction[];
  /** The resource sent (create, update). */
  resource?: unknown;
}

export interface FhirRequestShape {
  method: string;
  /** Path and query below the FHIR base. */
  url: string;
  body?: unknown;
  headers?: Record<string, string | undefined>;
}

const TYPE = /^[A-Z][A-Za-z]+$/;
const ID = /^[A-Za-z0-9\-.]{1,64}$/;
const ALL: FhirInteraction[] = ['create', 'read', 'update', 'delete', 'search'];

/** A nested value is classified as empty; the FHIR server refuses it with a 400. */
const bodyPairs = (body: unknown): Array<[string, string]> => searchBodyPairs(body).map(([k, v]) => [k, v ?? '']);

const operation = (): FhirRequestInteraction => ({ subtype: 'operation', needs: ALL, resourceTypes: ['*'], wholeServer: true });

export function classifyFhirRequest(req: FhirRequestShape): FhirRequestInteraction {
  const method = req.method.toUpperCase();
  const q = req.url.indexOf('?');
  const path = (q < 0 ? req.url : req.url.slice(0, q)).replace(/^\/+|\/+$/g, '');
  const query = [...new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1))];
  const segments = path === '' ? [] : path.split('/');
  const [type, second, third, fourth] = segments;

  if (segments.length === 0) {
    if (method === 'GET') {
      const types = query.filter(([k]) => k === '_type').flatMap(([, v]) => v.split(',').map((t) => t.trim()));
      return { subtype: 'search-system', needs: ['search'], resourceTypes: types.length ? types : ['*'], wholeServer: true };
    }
    if (method === 'POST') {
      const bundle = req.body as
        { type?: string; entry?: Array<{ request?: { method?: string; url?: string }; resource?: unknown }> } | undefined;
      const entries = (bundle?.entry ?? []).map((e) =>
        classifyFhirRequest({ method: e.request?.method ?? 'GET', url: e.request?.url ?? '', body: e.resource }),
      );
      return {
        subtype: bundle?.type === 'transaction' ? 'transaction' : 'batch',
        needs: [],
        resourceTypes: [],
        wholeServer: true,
        entries,
      };
    }
    return operation();
  }
  if (type === 'metadata' && segments.length === 1 && method === 'GET')
    return { subtype: 'capabilities', needs: [], resourceTypes: [], wholeServer: false };
  if (!TYPE.test(type)) return operation();
  const on = [type];

  if (segments.length === 1) {
    const conditional = (interaction: FhirInteraction, subtype: AuditSubtype): FhirRequestInteraction => ({
      subtype,
      needs: [interaction, 'search'],
      resourceTypes: on,
      wholeServer: true,
      resource: req.body,
    });
    switch (method) {
      case 'GET':
        return { subtype: 'search-type', needs: ['search'], resourceTypes: on, searchPairs: query, wholeServer: false };
      case 'POST': {
        const ifNoneExist = Object.entries(req.headers ?? {}).some(([k, v]) => k.toLowerCase() === 'if-none-exist' && v);
        return {
          subtype: 'create',
          needs: ifNoneExist ? ['create', 'search'] : ['create'],
          resourceTypes: on,
          wholeServer: false,
          resource: req.body,
        };
      }
      case 'PUT':
        return conditional('update', 'update');
      case 'DELETE':
        return conditional('delete', 'delete');
      case 'PATCH':
        return conditional('update', 'patch');
    }
    return operation();
  }
  if (segments.length === 2 && second === '_search' && method === 'POST') {
    return {
      subtype: 'search-type',
      needs: ['search'],
      resourceTypes: on,
      searchPairs: [...query, ...bodyPairs(req.body)],
      wholeServer: false,
    };
  }
  if (!ID.test(second)) return operation();
  const instance = { resourceTypes: on, id: second, wholeServer: false };
  if (segments.length === 2) {
    switch (method) {
      case 'GET':
        return { subtype: 'read', needs: ['read'], ...instance };
      case 'PUT':
        return { subtype: 'update', needs: ['update'], ...instance, resource: req.body };
      case 'DELETE':
        return { subtype: 'delete', needs: ['delete'], ...instance };
      case 'PATCH':
        // A JSON Patch can move a resource to another patient, which a patient list cannot check beforehand.
        return { subtype: 'patch', needs: ['update'], ...instance, wholeServer: true };
    }
    return operation();
  }
  // Patient/{id}/$everything reads the patient's whole record: every type, so it needs read and search on all
  // of them (system/*.rs), and it stays closed to patient/ scopes, whose lists it cannot be checked against.
  if (method === 'GET' && type === 'Patient' && third === '$everything' && segments.length === 3)
    return { subtype: 'search-system', needs: ['read', 'search'], resourceTypes: ['*'], id: second, wholeServer: true };
  if (method === 'GET' && third === '_history' && segments.length === 3)
    return { subtype: 'history-instance', needs: ['read'], ...instance };
  if (method === 'GET' && third === '_history' && segments.length === 4 && ID.test(fourth))
    return { subtype: 'vread', needs: ['read'], ...instance };
  return operation();
}
