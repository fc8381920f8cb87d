// Keys with scopes (issue 12): what each key may do through /fhir and through the agent's tools, the chat flag,
// the key file and its failures, and the scope grammar. The gateway is the composed one; only the model is faked.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { PermissionDeniedError } from 'openai';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../src/policies/auth/create-api-key.ts';
import { scopeGrantSchema } from '../src/policies/auth/smart-scope.ts';
import { ConfigError, loadConfig } from '../src/composition/config.ts';
import { script, toolMessages, toolNames } from './support/agent-kit.ts';
import { writeApiKeysFile } from './support/api-keys-file.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';

const dir = mkdtempSync(join(tmpdir(), 'api-key-scopes-'));
const made = {
  reader: createApiKey({ id: 'reader', scopes: 'system/*.rs chat' }),
  writer: createApiKey({ id: 'writer', scopes: 'system/*.cruds chat tools:write' }),
  ward: createApiKey({ id: 'ward', scopes: 'patient/*.rs chat', patients: ['S1000002'] }),
  obsReader: createApiKey({ id: 'obs-reader', scopes: 'system/Observation.rs chat' }),
  noChat: createApiKey({ id: 'no-chat', scopes: 'system/*.rs' }),
};
const keyFile = join(dir, 'keys.yaml');
const key = writeApiKeysFile(keyFile, made);

const OTHER_OBS = 'obs-S1000001-0001';
const OWN_OBS = 'obs-S1000002-0001';
const HEART_RATE = {
  patient: 'S1000002',
  code: { system: 'http://loinc.org', code: '8867-4', display: 'Heart rate' },
  value_quantity: { value: 72, unit: '/min' },
  effective_date_time: '2025-06-15T09:00:00Z',
};

let gw: RunningGateway;
const fhir = (k: string, path: string, init: RequestInit = {}) =>
  fetch(`${gw.baseUrl}/fhir${path}`, {
    ...init,
    headers: { authorization: `Bearer ${k}`, 'content-type': 'application/fhir+json', ...(init.headers ?? {}) },
  });
const clientFor = (k: string) => new OpenAI({ baseURL: `${gw.baseUrl}/v1`, apiKey: k, maxRetries: 0, timeout: 20_000 });
const chat = (k: string) =>
  clientFor(k).chat.completions.create({ model: gw.model, messages: [{ role: 'user', content: 'go' }] }) as Promise<any>;

async function expectForbidden(res: Response, says?: RegExp): Promise<void> {
  expect(res.status).toBe(403);
  const body = await res.json();
  expect(body).toMatchObject({ resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'forbidden' }] });
  if (says) expect(body.issue[0].diagnostics).toMatch(says);
}

beforeAll(async () => {
  gw = await startGateway({ env: { API_KEYS_FILE: keyFile, FHIR_SEED: 'true', SERVER_TOOLS: 'true', FHIR_WRITE_TOOLS: 'true' } });
});
afterAll(() => gw?.close());

describe('/fhir: writes need a write scope', () => {
  const patient = JSON.stringify({ resourceType: 'Patient', name: [{ family: 'Scopetest' }] });

  it('a read-only key cannot create, update, patch or delete anything, alone or in a bundle', async () => {
    const existing = await (await fhir(key.reader, '/Patient/S1000002')).json();
    await expectForbidden(await fhir(key.reader, '/Patient', { method: 'POST', body: patient }), /create on Patient/);
    await expectForbidden(
      await fhir(key.reader, '/Patient/S1000002', { method: 'PUT', body: JSON.stringify({ ...existing, gender: 'other' }) }),
      /update on Patient/,
    );
    await expectForbidden(await fhir(key.reader, '/Patient/S1000002', { method: 'DELETE' }), /delete on Patient/);
    await expectForbidden(await fhir(key.reader, '/Patient/S1000002', { method: 'PATCH', body: '[]' }), /update on Patient/);
    await expectForbidden(await fhir(key.reader, '/Observation?patient=S1000002', { method: 'DELETE' }), /delete on Observation/);
    const tx = {
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [{ resource: JSON.parse(patient), request: { method: 'POST', url: 'Patient' } }],
    };
    await expectForbidden(
      await fhir(key.reader, '', { method: 'POST', body: JSON.stringify(tx) }),
      /Bundle\.entry\[0\]: .*create on Patient/,
    );
    // Nothing changed, and reads still work.
    expect(await (await fhir(key.reader, '/Patient/S1000002')).json()).toEqual(existing);
    expect((await (await fhir(key.reader, '/Patient?family=Scopetest')).json()).total).toBe(0);
  });

  it('a key with system/*.cruds writes and deletes', async () => {
    const created = await fhir(key.writer, '/Patient', { method: 'POST', body: patient });
    expect(created.status).toBe(201);
    const { id } = await created.json();
    expect((await fhir(key.writer, `/Patient/${id}`, { method: 'DELETE' })).status).toBe(200);
  });

  it('AuditEvents are append-only, whatever the scopes', async () => {
    await expectForbidden(await fhir(key.writer, '/AuditEvent/any', { method: 'DELETE' }), /append-only/);
    await expectForbidden(
      await fhir(key.writer, '/AuditEvent', { method: 'POST', body: JSON.stringify({ resourceType: 'AuditEvent' }) }),
      /create on AuditEvent/,
    );
  });

  it('Patient/{id}/$everything is a read of every type: open to system/*.rs, closed to patient/ and one-type scopes', async () => {
    const res = await fhir(key.reader, '/Patient/S1000002/$everything?_count=20');
    expect(res.status).toBe(200);
    const bundle = await res.json();
    expect(bundle.entry[0].resource).toMatchObject({ resourceType: 'Patient', id: 'S1000002' });
    expect(bundle.entry.length).toBeGreaterThan(1);
    await expectForbidden(await fhir(key.ward, '/Patient/S1000002/$everything'), /not open to patient\/ scopes/);
    await expectForbidden(await fhir(key.obsReader, '/Patient/S1000002/$everything'));
  });

  it('the capability statement is open to every key', async () => {
    expect((await fhir(key.ward, '/metadata')).status).toBe(200);
  });
});

describe('/fhir: a patient-scoped key sees only its patients', () => {
  it('reads its patient and that patient’s resources', async () => {
    expect((await fhir(key.ward, '/Patient/S1000002')).status).toBe(200);
    expect((await fhir(key.ward, `/Observation/${OWN_OBS}`)).status).toBe(200);
    expect((await fhir(key.ward, `/Observation/${OWN_OBS}/_history`)).status).toBe(200);
    const own = await (await fhir(key.ward, '/Observation?patient=S1000002&_count=5')).json();
    expect(own.total).toBeGreaterThan(0);
    expect((await fhir(key.ward, '/Observation?subject=Patient/S1000002')).status).toBe(200);
  });

  it('cannot read another patient or another patient’s resources', async () => {
    await expectForbidden(await fhir(key.ward, '/Patient/S1000001'), /Patient\/S1000001/);
    // Another patient's resource does not exist for this key: 404, like an id never used, so no id is confirmed.
    expect((await fhir(key.ward, `/Observation/${OTHER_OBS}`)).status).toBe(404);
    expect((await fhir(key.ward, `/Observation/${OTHER_OBS}/_history/1`)).status).toBe(404);
    expect((await fhir(key.ward, `/Observation/${OTHER_OBS}/_history`)).status).toBe(404);
  });

  it('a search must name listed patients only', async () => {
    await expectForbidden(await fhir(key.ward, '/Observation?code=http://loinc.org|4548-4'), /add patient=<id>/);
    await expectForbidden(await fhir(key.ward, '/Observation'), /add patient=<id>/);
    await expectForbidden(await fhir(key.ward, '/Observation?patient=S1000001'), /Patient\/S1000001/);
    await expectForbidden(await fhir(key.ward, '/Observation?patient=S1000002,S1000001'), /Patient\/S1000001/);
    await expectForbidden(await fhir(key.ward, '/Observation?patient=S1000002&patient=S1000001'));
    await expectForbidden(await fhir(key.ward, '/Observation?subject=S1000002'), /add patient=<id>/);
    await expectForbidden(await fhir(key.ward, '/Observation?patient:missing=true'));
    await expectForbidden(await fhir(key.ward, '/Patient?family=Jorgensen'), /_id=<id>/);
    await expectForbidden(
      await fhir(key.ward, '/Observation/_search', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'patient=S1000001',
      }),
      /Patient\/S1000001/,
    );
    await expectForbidden(await fhir(key.ward, '?_type=Observation'), /search-system is not open to patient\/ scopes/);
  });

  it('_include brings shared data (the Medication an order names), never another patient’s data', async () => {
    const put = (path: string, body: object) => fhir(key.writer, path, { method: 'PUT', body: JSON.stringify(body) });
    expect(
      (await put('/Medication/med-scope', { resourceType: 'Medication', id: 'med-scope', code: { text: 'Heparin' } })).status,
    ).toBeLessThan(300);
    const order = (id: string, patient: string) => ({
      resourceType: 'MedicationRequest',
      id,
      status: 'active',
      intent: 'order',
      subject: { reference: `Patient/${patient}` },
      medicationReference: { reference: 'Medication/med-scope' },
    });
    expect((await put('/MedicationRequest/mr-scope-own', order('mr-scope-own', 'S1000002'))).status).toBeLessThan(300);
    expect((await put('/MedicationRequest/mr-scope-other', order('mr-scope-other', 'S1000001'))).status).toBeLessThan(300);

    const res = await fhir(key.ward, '/MedicationRequest?patient=S1000002&_id=mr-scope-own&_include=MedicationRequest:medication');
    expect(res.status).toBe(200);
    const page = await res.json();
    expect(page.entry.map((e: any) => `${e.search.mode} ${e.resource.resourceType}/${e.resource.id}`)).toEqual([
      'match MedicationRequest/mr-scope-own',
      'include Medication/med-scope',
    ]);
    // Shared data (no patient's) is open with the type's scope, by id too.
    expect((await fhir(key.ward, '/Medication/med-scope')).status).toBe(200);
    // A search of it must still name the key's patients, which Medication cannot.
    await expectForbidden(await fhir(key.ward, '/Medication?_id=med-scope&_revinclude=MedicationRequest:medication'));
    // Going back from the Medication to every order that names it reaches only the key's own: the other patient's
    // order does not exist for this key, inside the repository.
    const iterated = await fhir(
      key.ward,
      '/MedicationRequest?patient=S1000002&_include=MedicationRequest:medication&_include:iterate=Medication:ingredient&_revinclude:iterate=MedicationRequest:medication',
    );
    expect(iterated.status).toBe(200);
    const ids = (await iterated.json()).entry.map((e: any) => `${e.resource.resourceType}/${e.resource.id}`);
    expect(ids).toContain('MedicationRequest/mr-scope-own');
    expect(ids).toContain('Medication/med-scope');
    expect(ids).not.toContain('MedicationRequest/mr-scope-other');
  });

  it('a key scoped to one type cannot reach others', async () => {
    expect((await fhir(key.obsReader, '/Observation?patient=S1000002')).status).toBe(200);
    await expectForbidden(await fhir(key.obsReader, '/Patient/S1000002'), /read on Patient/);
    await expectForbidden(await fhir(key.obsReader, '?_type=Observation,Patient'), /search on Patient/);
  });
});

// The guard remembers, per connection, the header that last resolved to a key (issue 30). A proxy in front may carry
// several clients on one keep-alive connection: every request is still decided by the key it carries itself.
describe('one keep-alive connection, several keys', () => {
  it('decides each request by its own Authorization header, whatever the one before it said', async () => {
    const connection = new Client(gw.baseUrl, { pipelining: 1, connections: 1 } as Client.Options);
    let connects = 0;
    connection.on('connect', () => connects++);
    const get = async (authorization: string | undefined, path: string) => {
      const res = await connection.request({ method: 'GET', path: `/fhir${path}`, headers: authorization ? { authorization } : {} });
      await res.body.dump();
      return res.statusCode;
    };
    try {
      const own = `/Observation/${OWN_OBS}`;
      const other = `/Observation/${OTHER_OBS}`;
      const seen = [
        await get(`Bearer ${key.reader}`, other),
        await get(`Bearer ${key.ward}`, other),
        await get(`Bearer ${key.ward}`, own),
        await get(`Bearer ${key.reader}`, other),
        await get(`Bearer ${key.reader}x`, other),
        await get(`Bearer ${key.reader.slice(0, -1)}`, other),
        await get(undefined, other),
        await get('Basic abc', other),
        await get(`Bearer ${key.reader}`, other),
        await get(`bearer  ${key.ward} `, own),
        await get(`Bearer ${key.ward}`, other),
      ];
      expect(seen).toEqual([200, 404, 200, 200, 401, 401, 401, 401, 200, 200, 404]);
      // All on the one connection, or the test says nothing about remembering per connection.
      expect(connects).toBe(1);
    } finally {
      await connection.close();
    }
  });
});

describe('tools: the same scopes', () => {
  it('a key without write scope is not offered the write tools, and a write call comes back forbidden', async () => {
    const s = script(gw, [
      { toolCalls: [{ id: 'scoped-write-1', name: 'record_observation', args: HEART_RATE }] },
      { content: 'Could not record it.' },
    ]);
    const res = await chat(key.reader);
    expect(toolNames(s.bodies()[0])).toContain('search_observations');
    expect(toolNames(s.bodies()[0])).not.toContain('record_observation');
    expect(toolMessages(s.bodies()[1])[0].result).toMatchObject({
      ok: false,
      error: { code: 'forbidden', message: expect.stringMatching(/create on Observation/) },
    });
    // The loop went on: the model's next step is the answer.
    expect(res.choices[0].message.content).toBe('Could not record it.');
    expect(res.fhir_agent.written).toEqual([]);
    expect(res.fhir_agent.tool_calls[0].fhir_requests).toEqual([]);
  });

  it('a key with write scope and tools:write is offered the write tools and writes', async () => {
    const s = script(gw, [
      { toolCalls: [{ id: 'scoped-write-2', name: 'record_observation', args: HEART_RATE }] },
      { content: 'Recorded.' },
    ]);
    const res = await chat(key.writer);
    expect(toolNames(s.bodies()[0])).toContain('record_observation');
    expect(res.fhir_agent.written).toMatchObject([{ resourceType: 'Observation', created: true }]);
  });

  it('a patient-scoped key cannot search or read another patient’s data through the tools', async () => {
    const s = script(gw, [
      {
        toolCalls: [
          { id: 'w-1', name: 'search_observations', args: { patient: 'S1000001' } },
          { id: 'w-2', name: 'read_resource', args: { resourceType: 'Observation', id: OTHER_OBS } },
          { id: 'w-3', name: 'read_resource', args: { resourceType: 'Patient', id: 'S1000001' } },
          { id: 'w-4', name: 'find_patients', args: { family: 'Jorgensen' } },
          { id: 'w-5', name: 'search_observations', args: { patient: 'S1000002' } },
          { id: 'w-6', name: 'read_resource', args: { resourceType: 'Observation', id: OWN_OBS } },
        ],
      },
      { content: 'Done.' },
    ]);
    await chat(key.ward);
    const results = Object.fromEntries(toolMessages(s.bodies()[1]).map((m) => [m.tool_call_id, m.result]));
    for (const id of ['w-1', 'w-2', 'w-3']) expect(results[id], id).toMatchObject({ ok: false, error: { code: 'forbidden', status: 403 } });
    expect(JSON.stringify(results['w-2'])).not.toContain('S1000001');
    // A search that names no patient is confined to the key's: the server finds only S1000002, if anyone.
    expect(results['w-4']).toMatchObject({ ok: true });
    expect(JSON.stringify(results['w-4'])).not.toMatch(/S100000[013-9]/);
    expect(results['w-5']).toMatchObject({ ok: true });
    expect(results['w-6']).toMatchObject({ ok: true });
  });

  it('one key is never served another key’s cached tool result', async () => {
    // Key "writer" runs a server call in a mixed turn; key "ward" replays the same tool_call id in its follow-up.
    const clientTool = { type: 'function', function: { name: 'ask_user', parameters: { type: 'object', properties: {} } } };
    const call = { id: 'shared-id', name: 'read_resource', args: { resourceType: 'Patient', id: 'S1000001' } };
    script(gw, [{ toolCalls: [call, { id: 'c-1', name: 'ask_user', args: {} }] }]);
    await clientFor(key.writer).chat.completions.create({
      model: gw.model,
      messages: [{ role: 'user', content: 'go' }],
      tools: [clientTool],
    } as never);
    const s = script(gw, [{ content: 'ok' }]);
    await clientFor(key.ward).chat.completions.create({
      model: gw.model,
      tools: [clientTool],
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } },
            { id: 'c-1', type: 'function', function: { name: 'ask_user', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c-1', content: 'yes' },
      ],
    } as never);
    expect(toolMessages(s.bodies()[0]).find((m) => m.tool_call_id === call.id)?.result).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
  });
});

describe('the chat flag', () => {
  it('a key without it gets 403 insufficient_scope (openai SDK: PermissionDeniedError), and keeps its FHIR access', async () => {
    const err = await chat(key.noChat).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PermissionDeniedError);
    expect(err).toMatchObject({ status: 403, code: 'insufficient_scope', type: 'invalid_request_error' });
    expect((err as Error).message).toMatch(/"chat" flag/);
    expect((await clientFor(key.noChat).models.list()).data.length).toBe(1);
    expect((await fhir(key.noChat, '/Patient/S1000002')).status).toBe(200);
  });
});

describe('plain API_KEYS', () => {
  let plain: RunningGateway;
  beforeAll(async () => {
    plain = await startGateway({ env: { FHIR_SEED: 'true' } });
  });
  afterAll(() => plain?.close());
  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${plain.baseUrl}/fhir${path}`, {
      ...init,
      headers: { authorization: `Bearer ${plain.apiKey}`, 'content-type': 'application/fhir+json' },
    });

  it('read and chat, but write nothing through /fhir without FHIR_WRITE_TOOLS=true (issue 12)', async () => {
    expect((await call('/Patient/S1000002')).status).toBe(200);
    await expectForbidden(
      await call('/Patient', { method: 'POST', body: JSON.stringify({ resourceType: 'Patient' }) }),
      /API_KEYS#1.*create on Patient/,
    );
    await expectForbidden(await call('/Patient/S1000002', { method: 'DELETE' }), /delete on Patient/);
    expect((await call('/Patient/S1000002')).status).toBe(200);
  });
});

describe('the key file', () => {
  it('holds only SHA-256 digests, and an unknown key gets 401', async () => {
    const text = readFileSync(keyFile, 'utf8');
    for (const k of Object.values(key)) expect(text).not.toContain(k);
    expect((await fhir('fag_not-a-key', '/Patient/S1000002')).status).toBe(401);
    expect(gw.logs.join('\n')).not.toContain(key.ward);
  });

  it.each([
    ['keys:\n  - id: a\n    sha256: abc\n    scopes: system/*.rs\n', /keys\.0\.sha256: must be the 64 hex digits/],
    [
      `keys:\n  - id: a\n    sha256: ${'a'.repeat(64)}\n    scopes: system/*.sr\n`,
      /"system\/\*\.sr": the interactions must be letters of "cruds" in that order/,
    ],
    [
      `keys:\n  - id: a\n    sha256: ${'a'.repeat(64)}\n    scopes: patient/*.rs\n`,
      /keys\.0\.patients: patient\/ scopes need a patients list/,
    ],
    [
      `keys:\n  - id: a\n    sha256: ${'a'.repeat(64)}\n    scopes: chat\n  - id: a\n    sha256: ${'b'.repeat(64)}\n    scopes: chat\n`,
      /duplicate id a/,
    ],
    [`keys:\n  - id: a\n    sha256: ${'a'.repeat(64)}\n    scope: chat\n`, /keys\.0/],
    ['keys: [', /not YAML or JSON/],
  ])('a bad file stops boot with one line naming API_KEYS_FILE (%#)', (text, says) => {
    const path = join(dir, `bad-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(path, text);
    expect(() => loadConfig({ API_KEYS_FILE: path })).toThrow(ConfigError);
    expect(() => loadConfig({ API_KEYS_FILE: path })).toThrow(
      new RegExp(`^invalid API_KEYS_FILE="${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}": .*${says.source}`),
    );
  });

  it('a missing file, or a key both in the file and in API_KEYS, stops boot too', () => {
    expect(() => loadConfig({ API_KEYS_FILE: join(dir, 'nope.yaml') })).toThrow(/^invalid API_KEYS_FILE=.*cannot read it \(ENOENT\)$/);
    expect(() => loadConfig({ API_KEYS_FILE: keyFile, API_KEYS: key.ward })).toThrow(/key ward is also in API_KEYS/);
  });

  it('JSON works as well as YAML, and the keys turn auth on for any host', () => {
    const path = join(dir, 'keys.json');
    writeFileSync(path, JSON.stringify({ keys: [{ id: 'j', sha256: 'c'.repeat(64), scopes: ['system/Observation.read', 'chat'] }] }));
    const c = loadConfig({ API_KEYS_FILE: path, HOST: '0.0.0.0' });
    expect(c.authEnabled).toBe(true);
    expect(c.auditSink).toBe('file');
    expect(c.apiKeys[0].access).toMatchObject({ id: 'j', flags: new Set(['chat']) });
    expect([...c.apiKeys[0].access.scopes[0].interactions]).toEqual(['read', 'search']);
  });

  it('the server exits 78 with one line naming API_KEYS_FILE', () => {
    const path = join(dir, 'bad-boot.yaml');
    writeFileSync(path, 'keys:\n  - id: x\n');
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/composition/server.ts'], {
      env: { ...process.env, API_KEYS_FILE: path, HOST: '127.0.0.1' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status).toBe(78);
    expect(
      r.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('configuration error')),
    ).toEqual([expect.stringMatching(/^configuration error: invalid API_KEYS_FILE=".*bad-boot\.yaml": keys\.0\./)]);
  });

  it('npm run key makes an entry that loads, and refuses bad scopes', () => {
    const ok = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'scripts/create-api-key.ts', '--id', 'alice', '--scopes', 'system/*.rs chat'],
      { encoding: 'utf8', timeout: 20_000 },
    );
    expect(ok.status).toBe(0);
    const printedKey = /^\s+(fag_\S+)$/m.exec(ok.stdout)![1];
    const entry = ok.stdout.slice(ok.stdout.indexOf('  - id:'));
    const path = join(dir, 'made.yaml');
    writeFileSync(path, `keys:\n${entry}`);
    const c = loadConfig({ API_KEYS_FILE: path });
    expect(c.apiKeys.map((k) => k.access.id)).toEqual(['alice']);
    expect(entry).not.toContain(printedKey);
    const bad = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/create-api-key.ts', '--id', 'bob', '--scopes', 'user/*.rs'], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^error: scopes: "user\/\*\.rs": user\/ scopes need a signed-in user/);
  });
});

describe('the scope grammar (SMART v2)', () => {
  const parse = (s: string | string[]) => scopeGrantSchema.parse(s);
  it.each([
    ['system/*.rs', 'system', '*', ['read', 'search']],
    ['system/Observation.cruds', 'system', 'Observation', ['create', 'read', 'update', 'delete', 'search']],
    ['patient/Observation.c', 'patient', 'Observation', ['create']],
    ['system/Patient.read', 'system', 'Patient', ['read', 'search']],
    ['system/*.write', 'system', '*', ['create', 'update', 'delete']],
    ['patient/*.*', 'patient', '*', ['create', 'read', 'update', 'delete', 'search']],
  ])('%s', (text, context, resourceType, interactions) => {
    const [scope] = parse(text).scopes;
    expect(scope).toMatchObject({ context, resourceType });
    expect([...scope.interactions]).toEqual(interactions);
  });
  it('takes flags beside scopes, space-separated or as a list', () => {
    expect(parse('system/*.rs chat tools:write').flags).toEqual(new Set(['chat', 'tools:write']));
    expect(parse(['chat']).scopes).toEqual([]);
  });
  it.each([
    ['user/*.rs', /user\/ scopes need a signed-in user/],
    ['system/*.sr', /letters of "cruds" in that order/],
    ['system/*.rx', /letters of "cruds"/],
    ['system/Observations.rs', /Observations is not a FHIR R4 resource type/],
    ['system/Observation.rs?category=laboratory', /search restrictions/],
    ['launch/patient', /neither a scope/],
    ['admin', /neither a scope .* nor a flag \(chat, tools:write\)/],
    ['', /no scopes or flags/],
  ])('refuses %j', (text, says) => {
    const r = scopeGrantSchema.safeParse(text);
    expect(r.success).toBe(false);
    expect(r.error?.issues[0].message).toMatch(says);
  });
});
