// Issue 19, data level: a patient-scoped key sees and counts nothing outside its patients, on every interaction and
// every way in: /fhir reads, vreads, history, type searches (GET and POST, form and JSON bodies, any spelling),
// _summary=count, _count=0, _elements, _include/_revinclude(:iterate), $everything, batch and transaction entries,
// GraphQL, conditional create, MCP tools/call and chat tool calls. Generated requests from both patient keys of
// the attack (pat1 reads, patw also writes), each answer checked for any id, family name, birth date or count of
// another patient. The issue's reproductions are among the fixed cases. FUZZ_RUNS raises the count.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWN_PATIENT, writeAttackKeys } from './support/attack-keys.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { patientValue } from './support/patient-key-invariants.ts';
import { rawRequest, type RawAnswer } from './support/raw-request.ts';
import { completionReply } from './support/upstream-replies.ts';

const { file, key } = writeAttackKeys();
const runs = Number(process.env.FUZZ_RUNS ?? 1500);
const seed = Number(process.env.FUZZ_SEED ?? 19_020);
const TYPES = ['Patient', 'Observation', 'Condition', 'MedicationRequest', 'Encounter', 'Procedure', 'AllergyIntolerance'] as const;

interface Secrets {
  /** Strings that belong to other patients only: ids, family names, birth dates. */
  tokens: string[];
  /** The most any count may say for a type: the key's own patient's total. */
  ownTotal: Record<string, number>;
  /** Resource ids to aim at: some of the key's patient, most of others. */
  ids: Record<string, string[]>;
}

let gw: RunningGateway;
let secrets: Secrets;

const asAdmin = async (path: string) =>
  JSON.parse((await rawRequest(gw.baseUrl, { target: `/fhir${path}`, headers: { authorization: `Bearer ${key.admin}` } })).text);

async function collectSecrets(): Promise<Secrets> {
  const patients = (await asAdmin('/Patient?_count=1000')).entry.map((e: any) => e.resource);
  const own = patients.find((p: any) => p.id === OWN_PATIENT);
  const ownFamilies = new Set((own.name ?? []).map((n: any) => n.family));
  const tokens = new Set<string>();
  for (const p of patients) {
    if (p.id === OWN_PATIENT) continue;
    tokens.add(p.id);
    for (const n of p.name ?? []) if (n.family && !ownFamilies.has(n.family)) tokens.add(`"${n.family}"`);
    if (p.birthDate && p.birthDate !== own.birthDate) tokens.add(`"${p.birthDate}"`);
  }
  const ids: Record<string, string[]> = {};
  for (const type of TYPES) {
    const param = type === 'Patient' ? '_id' : 'patient';
    const sample = (await asAdmin(`/${type}?_count=40&_elements=id`)).entry ?? [];
    const mine = (await asAdmin(`/${type}?${param}=${OWN_PATIENT}&_count=3&_elements=id`)).entry ?? [];
    ids[type] = [...sample, ...mine].map((e: any) => e.resource.id);
  }
  return { tokens: [...tokens], ownTotal: await ownTotals(), ids };
}

async function ownTotals(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const type of TYPES)
    out[type] = (await asAdmin(`/${type}?${type === 'Patient' ? '_id' : 'patient'}=${OWN_PATIENT}&_summary=count`)).total;
  return out;
}

const escape = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * What in an answer belongs to another patient; undefined when nothing does. A string the request itself named (a
 * refusal may quote the id it refuses) counts only where it stands as data: an id or a reference.
 */
async function leak(answer: RawAnswer, request: string): Promise<string | undefined> {
  for (const t of secrets.tokens) {
    if (!answer.text.includes(t)) continue;
    if (!request.includes(t.replaceAll('"', ''))) return `shows ${t}`;
    const asData = new RegExp(`\\\\?"(?:id|reference)\\\\?":\\s*\\\\?"[^"\\\\]*${escape(t)}`);
    if (asData.test(answer.text)) return `shows ${t} as data`;
  }
  for (const m of answer.text.matchAll(/\\?"(?:total|count)\\?":\s*(\d+)/g)) {
    const n = Number(m[1]);
    if (n <= Math.max(...Object.values(secrets.ownTotal))) continue;
    // The patient key may have written new records of its own patient since: counted again before judging.
    secrets.ownTotal = await ownTotals();
    if (n > Math.max(...Object.values(secrets.ownTotal)))
      return `counts ${n} (own totals at most ${Math.max(...Object.values(secrets.ownTotal))})`;
  }
  return undefined;
}

interface Attempt {
  method: string;
  target: string;
  body?: string;
  headers?: Record<string, string>;
  key: 'pat1' | 'patw';
}

const send = (a: Attempt) =>
  rawRequest(gw.baseUrl, {
    method: a.method,
    target: a.target,
    body: a.body,
    headers: { authorization: `Bearer ${key[a.key]}`, ...(a.body ? { 'content-type': 'application/json' } : {}), ...a.headers },
  });

async function expectNoLeak(a: Attempt): Promise<RawAnswer> {
  const answer = await send(a);
  expect(answer.status, `${a.method} ${a.target} ${a.body ?? ''}`).not.toBe(500);
  const request = `${a.target} ${a.body ?? ''} ${JSON.stringify(a.headers ?? {})}`;
  // A chat answer's trace repeats the tool calls' arguments, which the caller wrote: judged without them.
  if (a.target === '/v1/chat/completions' && answer.status === 200) {
    const withoutArguments = JSON.stringify(JSON.parse(answer.text), (k, v) => (k === 'arguments' ? undefined : v));
    expect(
      await leak({ ...answer, text: withoutArguments }, request),
      `${a.key} chat ${a.body} → ${withoutArguments.slice(0, 300)}`,
    ).toBeUndefined();
    return answer;
  }
  expect(
    await leak(answer, request),
    `${a.key} ${a.method} ${a.target} ${a.body ?? ''} → ${answer.status} ${answer.text.slice(0, 300)}`,
  ).toBeUndefined();
  return answer;
}

// ---- generators ----------------------------------------------------------------------------------------------
const idOf = (type: string) => fc.constantFrom(...secrets.ids[type]);
const searchPairs = (type: string) =>
  fc.array(
    fc.oneof(
      patientValue().map((v) => [type === 'Patient' ? '_id' : 'patient', v]),
      idOf(type).map((v) => ['_id', v]),
      fc.constantFrom(['_summary', 'count'], ['_count', '0'], ['_count', '1000'], ['_elements', 'id'], ['_total', 'accurate']),
      fc.constantFrom(
        ['_include', `${type}:subject`],
        ['_include', `${type}:patient`],
        ['_revinclude', 'Observation:subject'],
        ['_revinclude:iterate', 'Observation:subject'],
        ['_include:iterate', 'MedicationRequest:medication'],
        ['_revinclude:iterate', 'MedicationRequest:medication'],
      ),
      fc.constantFrom(['birthdate', '1981-10-21'], ['family', 'Iwasaki'], ['value-quantity', 'gt6.3'], ['subject:Patient', 'S1000002']),
    ),
    { minLength: 1, maxLength: 4 },
  );
const spell = (pairs: ReadonlyArray<readonly string[]>, style: number): string => {
  const q = pairs.map(([k, v]) => `${style % 3 === 1 ? encodeURIComponent(k).replace(/^_/, '%5F') : k}=${encodeURIComponent(v)}`).join('&');
  return q;
};
const restAttempt = fc.constantFrom(...TYPES).chain((type) =>
  fc.oneof(
    fc.tuple(idOf(type), fc.constantFrom('', '/_history', '/_history/1', type === 'Patient' ? '/$everything' : '')).map(([id, tail]) => ({
      method: 'GET',
      target: `/fhir/${type}/${id}${tail}`,
    })),
    // The mount point, then the type after '/', '//', '/./' or '/x/../'; a fragment that names the key's patient.
    fc
      .tuple(searchPairs(type), fc.nat(5), fc.constantFrom('/', '//', '/./', '/x/../'), fc.boolean())
      .map(([pairs, style, lead, fragment]) => ({
        method: 'GET',
        target: `/fhir${lead}${type}?${spell(pairs, style)}${fragment ? `#&patient=${OWN_PATIENT}` : ''}`,
      })),
    fc.tuple(searchPairs(type), searchPairs(type), fc.boolean()).map(([query, body, json]) => ({
      method: 'POST',
      target: `/fhir/${type}/_search?${spell(query, 0)}`,
      body: json ? JSON.stringify(Object.fromEntries(body)) : spell(body, 0),
      headers: (json ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) as Record<string, string>,
    })),
    fc
      .tuple(fc.array(searchPairs(type), { minLength: 1, maxLength: 3 }), fc.constantFrom('batch', 'transaction'))
      .map(([entries, kind]) => ({
        method: 'POST',
        target: '/fhir',
        body: JSON.stringify({
          resourceType: 'Bundle',
          type: kind,
          entry: entries.map((pairs) => ({ request: { method: 'GET', url: `${type}?${spell(pairs, 0)}` } })),
        }),
      })),
  ),
);
const graphqlAttempt = fc
  .constantFrom(
    '{ Patient(id: "S1000002") { id birthDate name { family } } }',
    '{ ObservationList(subject: "Patient/S1000002") { id } }',
    '{ PatientList(_count: 100) { id birthDate } }',
    '{ ObservationConnection(_count: 0) { count } }',
    'mutation { AuditEventDelete(id: "x") { id } }',
  )
  .map((query) => ({ method: 'POST', target: '/fhir/$graphql', body: JSON.stringify({ query }) }));
const conditionalCreate = () =>
  fc.tuple(idOf('Observation'), fc.constantFrom('_id', 'subject', 'patient')).map(([id, param]) => ({
    method: 'POST',
    target: '/fhir/Observation',
    key: 'patw' as const,
    headers: { 'if-none-exist': param === '_id' ? `_id=${id}` : `${param}=Patient/S1000002` },
    body: JSON.stringify({
      resourceType: 'Observation',
      status: 'final',
      code: { text: 'probe' },
      subject: { reference: `Patient/${OWN_PATIENT}` },
    }),
  }));

beforeAll(async () => {
  gw = await startGateway({
    handler: (req) => {
      // A model that calls whatever tool the user names ({"name","arguments"} as the message), then repeats the result.
      const messages = req.body.messages as Array<{ role: string; content: string }>;
      const last = messages.at(-1)!;
      if (last.role === 'tool') return completionReply({ content: last.content });
      const call = JSON.parse(last.content);
      return completionReply({ toolCalls: [{ name: call.name, arguments: JSON.stringify(call.arguments) }] });
    },
    env: {
      API_KEYS: '',
      API_KEYS_FILE: file,
      FHIR_SEED: 'true',
      SERVER_TOOLS: 'true',
      FHIR_WRITE_TOOLS: 'true',
      RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'warn',
    },
  });
  secrets = await collectSecrets();
});
afterAll(() => gw?.close());

describe('a patient-scoped key sees and counts only its patients', () => {
  it('the issue’s reproductions', async () => {
    const pat1 = (target: string, more: Partial<Attempt> = {}) => expectNoLeak({ method: 'GET', target, key: 'pat1', ...more });
    for (const q of ['_summary=count', '_count=0']) {
      await pat1(`/fhir//Observation?${q}#&patient=${OWN_PATIENT}`);
      const own = JSON.parse((await pat1(`/fhir/Observation?${q}&patient=${OWN_PATIENT}`)).text);
      expect(own.total).toBe(secrets.ownTotal.Observation);
    }
    await pat1(`/fhir//Patient?family=Iwasaki&birthdate=1981-10-21&_summary=count#&_id=${OWN_PATIENT}`);
    await pat1(`/fhir//Observation?value-quantity=gt6.3&_summary=count#&_id=obs-S1000002-0019`);
    const search = await pat1(`/fhir//Observation/_search?patient=${OWN_PATIENT}`, {
      method: 'POST',
      body: JSON.stringify({ _summary: 'count', _id: 'obs-S1000002-0019' }),
    });
    expect([0, undefined]).toContain(JSON.parse(search.text).total ?? 0);
    // Conditional create by another patient's resource: never the resource, never a 412 oracle.
    for (const ifNoneExist of ['_id=obs-S1000002-0019', 'subject=Patient/S1000002']) {
      const created = await expectNoLeak({
        method: 'POST',
        target: '/fhir/Observation',
        key: 'patw',
        headers: { 'if-none-exist': ifNoneExist },
        body: JSON.stringify({
          resourceType: 'Observation',
          status: 'final',
          code: { text: 'probe' },
          subject: { reference: `Patient/${OWN_PATIENT}` },
        }),
      });
      expect(created.status, ifNoneExist).not.toBe(412);
    }
    // _elements on the key's own data works (it was a 403).
    const trimmed = await pat1(`/fhir/Observation?patient=${OWN_PATIENT}&_elements=id&_count=2`);
    expect(trimmed.status).toBe(200);
  });

  it(`generated /fhir requests (${runs} cases, seed ${seed}) never show another patient`, async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          {
            weight: 8,
            arbitrary: fc.tuple(restAttempt, fc.constantFrom<'pat1' | 'patw'>('pat1', 'patw')).map(([a, k]) => ({ ...a, key: k })),
          },
          { weight: 1, arbitrary: graphqlAttempt.map((a) => ({ ...a, key: 'pat1' as const })) },
          { weight: 1, arbitrary: conditionalCreate() },
        ),
        async (attempt: Attempt) => {
          const answer = await expectNoLeak(attempt);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        },
      ),
      { numRuns: runs, seed },
    );
    console.log('access invariants: statuses', Object.fromEntries(statuses));
    // Enough of the corpus must be answered with data, or the property says little.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(runs / 15);
  }, 600_000);

  it('MCP tools/call and chat tool calls show only the key’s patient', async () => {
    const calls: Array<{ name: string; arguments: Record<string, unknown> }> = [
      { name: 'read_resource', arguments: { resourceType: 'Patient', id: 'S1000002' } },
      { name: 'read_resource', arguments: { resourceType: 'Observation', id: 'obs-S1000002-0019' } },
      { name: 'find_patients', arguments: { family: 'Iwasaki' } },
      { name: 'find_patients', arguments: {} },
      { name: 'search_observations', arguments: { patient: 'S1000002' } },
      { name: 'search_observations', arguments: { patient: OWN_PATIENT, count: 100 } },
      { name: 'search_medication_requests', arguments: { patient: 'S1000002' } },
    ];
    for (const call of calls) {
      const mcp = await expectNoLeak({
        method: 'POST',
        target: '/mcp',
        key: 'pat1',
        headers: { accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: call }),
      });
      expect(mcp.status, call.name).toBe(200);
      const chat = await expectNoLeak({
        method: 'POST',
        target: '/v1/chat/completions',
        key: 'pat1',
        body: JSON.stringify({ model: gw.model, messages: [{ role: 'user', content: JSON.stringify(call) }] }),
      });
      expect(chat.status, call.name).toBe(200);
    }
  });
});
