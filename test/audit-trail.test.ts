// The durable audit (issue 12): every FHIR read and write, through /fhir or a tool, is an R4 AuditEvent naming the
// key by id, the resources and the patient by reference, and the outcome; never a key, a message or a search value.
// AUDIT_SINK=fhir is searched by patient; AUDIT_SINK=file is append-only NDJSON that survives kill -9.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditEvent } from '@medplum/fhirtypes';
import OpenAI from 'openai';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditSink } from '../src/policies/audit/audit-trail.ts';
import { buildAuditEvent } from '../src/policies/audit/audit-event.ts';
import { createFileAuditSink } from '../src/policies/audit/file-audit-sink.ts';
import { createApiKey } from '../src/policies/auth/create-api-key.ts';
import { composeGateway } from '../src/composition/compose-gateway.ts';
import { loadConfig } from '../src/composition/config.ts';
import { script } from './support/agent-kit.ts';
import { writeApiKeysFile } from './support/api-keys-file.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';

const dir = mkdtempSync(join(tmpdir(), 'audit-trail-'));
const made = {
  ward: createApiKey({ id: 'ward', scopes: 'patient/*.rs chat', patients: ['S1000002'] }),
  writer: createApiKey({ id: 'writer', scopes: 'system/*.cruds chat tools:write' }),
  auditor: createApiKey({ id: 'auditor', scopes: 'system/AuditEvent.rs system/Patient.rs' }),
};
const keyFile = join(dir, 'keys.yaml');
const key = writeApiKeysFile(keyFile, made);

const subtypeOf = (e: AuditEvent) => e.subtype?.[0]?.code;
const refsOf = (e: AuditEvent) => (e.entity ?? []).map((x) => x.what?.reference).filter(Boolean);

describe('AUDIT_SINK=fhir on the embedded server', () => {
  let gw: RunningGateway;
  const fhir = (k: string, path: string, init: RequestInit = {}) =>
    fetch(`${gw.baseUrl}/fhir${path}`, { ...init, headers: { authorization: `Bearer ${k}`, 'content-type': 'application/fhir+json' } });
  const auditFor = async (query: string): Promise<AuditEvent[]> => {
    const res = await fhir(key.auditor, `/AuditEvent?${query}&_count=500`);
    expect(res.status).toBe(200);
    return ((await res.json()).entry ?? []).map((e: { resource: AuditEvent }) => e.resource);
  };

  beforeAll(async () => {
    gw = await startGateway({
      env: { API_KEYS_FILE: keyFile, FHIR_SEED: 'true', SERVER_TOOLS: 'true', FHIR_WRITE_TOOLS: 'true', AUDIT_SINK: 'fhir' },
    });
  });
  afterAll(() => gw?.close());

  it('records reads, searches, refusals and writes through /fhir, found by GET /fhir/AuditEvent?entity=Patient/…', async () => {
    expect((await fhir(key.ward, '/Patient/S1000002')).status).toBe(200);
    expect((await fhir(key.ward, `/Observation?patient=S1000002&code=${encodeURIComponent('http://loinc.org|4548-4')}`)).status).toBe(200);
    expect((await fhir(key.ward, '/Patient/S1000001')).status).toBe(403);
    expect((await fhir(key.auditor, '/Patient?family=Iwasaki')).status).toBe(200);
    const obs = { resourceType: 'Observation', status: 'final', code: { text: 'audit probe' }, subject: { reference: 'Patient/S1000002' } };
    const created = await (await fhir(key.writer, '/Observation', { method: 'POST', body: JSON.stringify(obs) })).json();
    expect(
      (
        await fhir(key.writer, `/Observation/${created.id}`, {
          method: 'PUT',
          body: JSON.stringify({ ...obs, id: created.id, status: 'amended' }),
        })
      ).status,
    ).toBe(200);
    expect((await fhir(key.writer, `/Observation/${created.id}`, { method: 'DELETE' })).status).toBe(200);

    const events = await auditFor('entity=Patient/S1000002');
    const read = events.find((e) => subtypeOf(e) === 'read' && e.agent[0].altId === 'ward');
    expect(read).toMatchObject({
      resourceType: 'AuditEvent',
      type: { system: 'http://terminology.hl7.org/CodeSystem/audit-event-type', code: 'rest' },
      subtype: [{ system: 'http://hl7.org/fhir/restful-interaction', code: 'read' }],
      action: 'R',
      outcome: '0',
      agent: [
        {
          who: { identifier: { system: 'urn:fhir-agent-gateway:api-key-id', value: 'ward' } },
          requestor: true,
          network: { address: '127.0.0.1', type: '2' },
        },
      ],
      source: { site: 'fhir-agent-gateway', observer: { display: 'fhir-agent-gateway' } },
      entity: [{ what: { reference: 'Patient/S1000002' }, role: { code: '1', display: 'Patient' } }],
    });
    expect(Date.parse(read!.recorded)).not.toBeNaN();
    const search = events.find((e) => subtypeOf(e) === 'search-type' && e.agent[0].altId === 'ward')!;
    expect(search).toMatchObject({
      action: 'E',
      outcome: '0',
      entity: expect.arrayContaining([
        expect.objectContaining({
          type: { system: 'http://hl7.org/fhir/resource-types', code: 'Observation' },
          role: expect.objectContaining({ code: '24' }),
        }),
      ]),
    });
    expect(refsOf(search).some((r) => r!.startsWith('Observation/'))).toBe(true);
    // A name search records the type and who was found, not the name.
    const byName = events.find((e) => subtypeOf(e) === 'search-type' && e.agent[0].altId === 'auditor')!;
    expect(refsOf(byName)).toContain('Patient/S1000002');
    for (const [subtype, action] of [
      ['create', 'C'],
      ['update', 'U'],
      ['delete', 'D'],
    ]) {
      const w = events.find((e) => subtypeOf(e) === subtype && refsOf(e).includes(`Observation/${created.id}`));
      expect(w, subtype).toMatchObject({ action, outcome: '0', agent: [{ altId: 'writer' }] });
    }

    const refused = (await auditFor('entity=Patient/S1000001')).find((e) => e.agent[0].altId === 'ward')!;
    expect(refused).toMatchObject({ outcome: '4', outcomeDesc: expect.stringMatching(/^403 denied: .*Patient\/S1000001/) });
    expect((await auditFor('altid=ward')).length).toBeGreaterThanOrEqual(3);
    expect((await auditFor('patient=S1000002')).length).toBe(events.length);

    const all = JSON.stringify(await auditFor('_sort=_id'));
    for (const secret of [...Object.values(key), 'Iwasaki', '4548-4', 'audit probe']) expect(all).not.toContain(secret);
  });

  it('records each tool call’s FHIR interactions with the tool’s name, and no message contents', async () => {
    script(gw, [
      {
        toolCalls: [
          { id: 't-1', name: 'search_observations', args: { patient: 'S1000002', code: 'http://loinc.org|718-7' } },
          { id: 't-2', name: 'read_resource', args: { resourceType: 'Patient', id: 'S1000001' } },
        ],
      },
      { content: 'Hemoglobin reply with private words' },
    ]);
    const client = new OpenAI({ baseURL: `${gw.baseUrl}/v1`, apiKey: key.ward, maxRetries: 0 });
    await client.chat.completions.create({
      model: gw.model,
      messages: [{ role: 'user', content: 'What is the secret hemoglobin of Iwasaki?' }],
    });

    const tool = (name: string) => (e: AuditEvent) => e.agent[1]?.who?.display === `fhir-agent-gateway tool ${name}`;
    const searched = (await auditFor('entity=Patient/S1000002')).find(tool('search_observations'));
    expect(searched).toMatchObject({ subtype: [{ code: 'search-type' }], outcome: '0', agent: [{ altId: 'ward' }, { requestor: false }] });
    expect(searched!.agent[0].network).toBeUndefined();
    const refused = (await auditFor('entity=Patient/S1000001')).find(tool('read_resource'));
    expect(refused).toMatchObject({ subtype: [{ code: 'read' }], outcome: '4', outcomeDesc: expect.stringContaining('denied') });
    const all = JSON.stringify(await auditFor('_sort=_id'));
    for (const text of ['secret hemoglobin', 'private words', '718-7']) expect(all).not.toContain(text);
  });
});

describe('when the audit is on', () => {
  it('off for the anonymous loopback sandbox, file by default once keys are configured', () => {
    expect(loadConfig({}).auditSink).toBe('off');
    expect(loadConfig({ AUDIT_SINK: 'file' }).auditSink).toBe('off');
    expect(loadConfig({ API_KEYS: 'k1' })).toMatchObject({ auditSink: 'file', AUDIT_FILE: 'audit/audit.ndjson' });
    expect(loadConfig({ API_KEYS_FILE: keyFile, AUDIT_SINK: 'fhir' }).auditSink).toBe('fhir');
    expect(() => loadConfig({ AUDIT_SINK: 'syslog' })).toThrow(/^invalid AUDIT_SINK/);
  });

  it('an audit file that cannot be opened stops boot with one line naming AUDIT_FILE', async () => {
    const blocker = join(dir, 'not-a-dir');
    writeFileSync(blocker, '');
    const config = loadConfig({ API_KEYS: 'k1', AUDIT_FILE: join(blocker, 'audit.ndjson'), LOG_LEVEL: 'silent', FHIR_SEED: 'false' });
    await expect(composeGateway({ config, logger: pino({ level: 'silent' }) })).rejects.toThrow(
      expect.objectContaining({
        name: 'ConfigError',
        message: expect.stringMatching(/^invalid AUDIT_FILE=".*not-a-dir\/audit\.ndjson": cannot open it for appending \(E[A-Z]+\)$/),
      }),
    );
  });

  it('the keyless sandbox records nothing, even with a sink', async () => {
    const written: AuditEvent[] = [];
    const sink: AuditSink = { write: async (e) => void written.push(e), close: async () => {} };
    const gateway = await composeGateway({
      config: loadConfig({ LOG_LEVEL: 'silent', FHIR_SEED: 'true' }),
      logger: pino({ level: 'silent' }),
      audit: sink,
    });
    expect((await gateway.app.inject({ url: '/fhir/Patient/S1000002' })).statusCode).toBe(200);
    await gateway.close();
    expect(written).toEqual([]);
  });

  it('a sink that fails is logged, and the answer still goes out', async () => {
    const lines: string[] = [];
    const sink: AuditSink = { write: async () => Promise.reject(new Error('disk full')), close: async () => {} };
    const config = loadConfig({ API_KEYS: 'k1', LOG_LEVEL: 'error', FHIR_SEED: 'true' });
    const gateway = await composeGateway({
      config,
      logger: pino({ level: 'error' }, { write: (l: string) => void lines.push(l) }),
      audit: sink,
    });
    expect((await gateway.app.inject({ url: '/fhir/Patient/S1000002', headers: { authorization: 'Bearer k1' } })).statusCode).toBe(200);
    await gateway.close();
    expect(lines.map((l) => JSON.parse(l))).toContainEqual(
      expect.objectContaining({ msg: 'audit record not written', err: 'disk full', subtype: 'read', callerId: 'API_KEYS#1' }),
    );
  });
});

describe('AUDIT_SINK=file', () => {
  const event = (n: number) =>
    buildAuditEvent(
      { subtype: 'read', callerId: `k${n}`, status: 200, references: [`Observation/o${n}`], patients: ['S1000002'] },
      new Date(0),
    );

  it('appends one JSON line per record, each on disk before its write resolves', async () => {
    const path = join(dir, 'group', 'audit.ndjson');
    const sink = await createFileAuditSink({ path, maxBytes: 1 << 30 });
    await Promise.all(
      Array.from({ length: 200 }, (_, n) => sink.write(event(n)).then(() => expect(readFileSync(path, 'utf8')).toContain(`"k${n}"`))),
    );
    await sink.write(event(200));
    await sink.close();
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).agent[0].altId).sort()).toEqual(Array.from({ length: 201 }, (_, n) => `k${n}`).sort());
    await expect(sink.write(event(0))).rejects.toThrow(/closed/);
  });

  it('rotates past AUDIT_FILE_MAX_BYTES to <file>.<time>, keeping every old file', async () => {
    const path = join(dir, 'rotate', 'audit.ndjson');
    const sink = await createFileAuditSink({ path, maxBytes: 4096, now: () => new Date('2025-01-02T03:04:05.678Z') });
    for (let n = 0; n < 30; n++) await sink.write(event(n));
    await sink.close();
    const files = readdirSync(join(dir, 'rotate')).sort();
    expect(files).toEqual(
      expect.arrayContaining(['audit.ndjson', 'audit.ndjson.2025-01-02T03-04-05-678Z', 'audit.ndjson.2025-01-02T03-04-05-678Z-1']),
    );
    const lines = files.flatMap((f) =>
      readFileSync(join(dir, 'rotate', f), 'utf8')
        .trimEnd()
        .split('\n'),
    );
    expect(lines).toHaveLength(30);
    for (const f of files) expect(readFileSync(join(dir, 'rotate', f)).length).toBeLessThanOrEqual(4096);
  });

  it('past AUDIT_FILE_MAX_TOTAL_BYTES the oldest rotated files are deleted, each reported (issue 28)', async () => {
    const folder = join(dir, 'retain');
    const path = join(folder, 'audit.ndjson');
    const deleted: string[] = [];
    const total = 3 * 4096;
    const sink = await createFileAuditSink({
      path,
      maxBytes: 4096,
      maxTotalBytes: total,
      onDeleted: (file) => deleted.push(file),
      now: () => new Date('2025-01-02T03:04:05.678Z'),
    });
    for (let n = 0; n < 80; n++) await sink.write(event(n));
    await sink.close();
    const files = readdirSync(folder);
    const bytes = files.reduce((sum, f) => sum + statSync(join(folder, f)).size, 0);
    expect(bytes).toBeLessThanOrEqual(total);
    expect(deleted.length).toBeGreaterThan(0);
    for (const f of deleted) expect(files).not.toContain(f.split('/').pop());
    // The oldest went first: what is left is the newest records, the last one included.
    const kept = files.flatMap((f) => readFileSync(join(folder, f), 'utf8').trimEnd().split('\n')).map((l) => JSON.parse(l).agent[0].altId);
    expect(kept).toContain('k79');
    expect(kept).not.toContain('k0');
  });

  it('with AUDIT_FILE_DELETE_OLDEST=false a write past the total is refused with an error naming it, nothing deleted', async () => {
    const folder = join(dir, 'refuse');
    const path = join(folder, 'audit.ndjson');
    const sink = await createFileAuditSink({ path, maxBytes: 4096, maxTotalBytes: 2 * 4096, deleteOldest: false });
    let refused: Error | undefined;
    for (let n = 0; n < 80 && !refused; n++) await sink.write(event(n)).catch((err: Error) => (refused = err));
    expect(refused?.message).toMatch(/audit storage full: .*AUDIT_FILE_MAX_TOTAL_BYTES \(8192 bytes\).*AUDIT_FILE_DELETE_OLDEST=false/);
    const before = readdirSync(folder).map((f) => [f, statSync(join(folder, f)).size]);
    await expect(sink.write(event(99))).rejects.toThrow(/AUDIT_FILE_MAX_TOTAL_BYTES/);
    expect(readdirSync(folder).map((f) => [f, statSync(join(folder, f)).size])).toEqual(before);
    expect(before.reduce((sum, [, size]) => sum + Number(size), 0)).toBeLessThanOrEqual(2 * 4096);
    await sink.close();
  });

  it('the documented jq and grep lines find a patient’s records', async () => {
    const path = join(dir, 'find', 'audit.ndjson');
    const sink = await createFileAuditSink({ path, maxBytes: 1 << 20 });
    await sink.write(event(1));
    await sink.write(
      buildAuditEvent(
        { subtype: 'read', callerId: 'other', status: 200, references: ['Patient/S10000021'], patients: ['S10000021'] },
        new Date(0),
      ),
    );
    await sink.close();
    const jq = execFileSync('sh', ['-c', `jq -c 'select(any(.entity[]?; .what.reference == "Patient/S1000002"))' ${path}*`], {
      encoding: 'utf8',
    });
    expect(
      jq
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).agent[0].altId),
    ).toEqual(['k1']);
    const grep = execFileSync('sh', ['-c', `grep -h '"reference":"Patient/S1000002"' ${path}*`], { encoding: 'utf8' });
    expect(grep.trim().split('\n')).toHaveLength(1);
  });

  it('kill -9 loses at most the records of requests still in flight', async () => {
    const path = join(dir, 'killed', 'audit.ndjson');
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/composition/server.ts'], {
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: '0',
        API_KEYS_FILE: keyFile,
        AUDIT_FILE: path,
        FHIR_SEED: 'false',
        LOG_LEVEL: 'info',
        RATE_LIMIT_PER_MINUTE: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    let out = '';
    const baseUrl = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        out += d;
        const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) resolve(m[1]);
      });
      void exited.then(() => reject(new Error(`server exited before listening: ${out}`)));
    });
    const done: string[] = [];
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const res = await fetch(`${baseUrl}/fhir/Patient`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key.writer}`, 'content-type': 'application/fhir+json' },
          body: JSON.stringify({ resourceType: 'Patient', gender: 'unknown' }),
        }).catch(() => undefined);
        if (!res) return;
        if (res.status === 201) done.push(`Patient/${(await res.json()).id}`);
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    while (done.length < 40) await new Promise((r) => setTimeout(r, 5));
    const answered = [...done];
    child.kill('SIGKILL');
    stop = true;
    expect(await exited).toBe('SIGKILL');
    await Promise.all(workers);

    const lines = readFileSync(path, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    const recorded = new Set(
      lines.map((l) => JSON.parse(l) as AuditEvent).flatMap((e) => (subtypeOf(e) === 'create' && e.outcome === '0' ? refsOf(e) : [])),
    );
    for (const ref of answered) expect(recorded, ref).toContain(ref);
    // In flight at the kill (4 workers): answered or not, their records are the only ones that may be missing.
    expect(done.length - recorded.size).toBeLessThanOrEqual(4);
  });
});
