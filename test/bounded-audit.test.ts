// Issue 28, findings 2 and 9: the audit records what a caller was shown, not what the gateway read to find it, and
// reference reads are cached where they hit. Over real HTTP (POST /mcp tools/call, /fhir, chat) against gateways
// with a file audit: find_codes writes under 20 KB of audit on the synthetic EHR and on MIMIC-shaped data (it wrote
// about 850 KB and 94 KB before), a key past AUDIT_KEY_MAX_BYTES_PER_MINUTE gets 429 on every route in that route's
// envelope, and the Medication catalogue is read once across ten drug-name calls (ten times before), again only
// after a write through the gateway.
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeMimicDemo } from '../fixtures/mimic/generate-mimic-demo.ts';
import { readSyntheticEhrBundles } from '../fixtures/synthetic-ehr.ts';
import { createApiKey } from '../src/policies/auth/create-api-key.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { createEmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';
import { TOOL_CALL_AUDIT_MAX_BYTES } from '../src/policies/auth/scoped-fhir-client.ts';
import { writeApiKeysFile } from './support/api-keys-file.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { completionReply } from './support/upstream-replies.ts';

const dir = mkdtempSync(join(tmpdir(), 'bounded-audit-'));
const keyFile = join(dir, 'keys.yaml');
const key = writeApiKeysFile(keyFile, {
  sys: createApiKey({ id: 'sys', scopes: 'system/*.cruds chat tools:write' }),
});

type CallResult = { ok: boolean; content?: any; error?: { code: string; message: string } };

async function toolCall(gw: RunningGateway, name: string, args: Record<string, unknown>, k = key.sys) {
  const res = await fetch(`${gw.baseUrl}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { result: { content: Array<{ text: string }> } };
  return JSON.parse(body.result.content[0].text) as CallResult;
}

/** Bytes the audit file grew by while `f` ran (the answer waits for its records' fsync). */
async function auditBytesOf(file: string, f: () => Promise<unknown>): Promise<number> {
  const size = () => statSync(file, { throwIfNoEntry: false })?.size ?? 0;
  const before = size();
  await f();
  return size() - before;
}

describe('find_codes writes at most 20 KB of audit, whatever it scanned', () => {
  const cases: Array<{ data: string; env: Record<string, string>; text: string }> = [
    { data: 'the synthetic EHR', env: { FHIR_SEED: 'true' }, text: 'er' },
    { data: 'MIMIC-shaped data', env: { FHIR_SEED: 'true', FHIR_SEED_DIR: join(dir, 'mimic') }, text: 'er' },
  ];
  for (const c of cases) {
    it(`on ${c.data}`, async () => {
      if (c.env.FHIR_SEED_DIR) await writeMimicDemo(c.env.FHIR_SEED_DIR, { patients: 5, seed: 23 });
      const auditFile = join(dir, `audit-${c.data.split(' ')[0]}.ndjson`);
      const gw = await startGateway({
        noUpstream: true,
        env: { API_KEYS: '', API_KEYS_FILE: keyFile, AUDIT_SINK: 'file', AUDIT_FILE: auditFile, RATE_LIMIT_PER_MINUTE: '0', ...c.env },
      });
      try {
        let result: CallResult | undefined;
        const bytes = await auditBytesOf(auditFile, async () => {
          result = await toolCall(gw, 'find_codes', { resourceType: 'Observation', text: c.text });
        });
        expect(result!.ok).toBe(true);
        // It read thousands of observations to count their codes: those are counted, not listed.
        expect(result!.content.note).toMatch(/more exist; counts are of the 3000 read|Counted over/);
        console.log(`[bounded-audit] find_codes on ${c.data}: ${bytes} audit bytes`);
        expect(bytes).toBeGreaterThan(0);
        expect(bytes).toBeLessThanOrEqual(TOOL_CALL_AUDIT_MAX_BYTES);
        // A search still names what it showed: the observations of one page.
        const page = await auditBytesOf(auditFile, () => toolCall(gw, 'search_observations', { patient: 'S1000001', count: 100 }));
        expect(page).toBeLessThanOrEqual(TOOL_CALL_AUDIT_MAX_BYTES);
      } finally {
        await gw.close();
      }
    }, 120_000);
  }
});

describe('AUDIT_KEY_MAX_BYTES_PER_MINUTE', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({
      handler: () => completionReply({ content: 'done' }),
      env: {
        API_KEYS: '',
        API_KEYS_FILE: keyFile,
        AUDIT_SINK: 'file',
        AUDIT_FILE: join(dir, 'budget.ndjson'),
        AUDIT_KEY_MAX_BYTES_PER_MINUTE: '8000',
        RATE_LIMIT_PER_MINUTE: '0',
        FHIR_SEED: 'true',
        LOG_LEVEL: 'warn',
      },
    });
  }, 60_000);
  afterAll(() => gw?.close());

  it('past it, the key gets 429 on /fhir (OperationOutcome), /mcp and chat (OpenAI envelope), with Retry-After', async () => {
    const auth = { authorization: `Bearer ${key.sys}` };
    let fhir: Response | undefined;
    // Each read writes about 1.2 KB: the budget is spent within a few.
    for (let i = 0; i < 20; i++) {
      fhir = await fetch(`${gw.baseUrl}/fhir/Observation?patient=S1000001&_count=20`, { headers: auth });
      if (fhir.status === 429) break;
    }
    expect(fhir!.status).toBe(429);
    expect(Number(fhir!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const outcome = (await fhir!.json()) as { resourceType: string; issue: Array<{ diagnostics?: string }> };
    expect(outcome.resourceType).toBe('OperationOutcome');
    expect(outcome.issue[0].diagnostics).toMatch(/AUDIT_KEY_MAX_BYTES_PER_MINUTE/);

    const mcp = await fetch(`${gw.baseUrl}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'find_patients', arguments: {} } }),
    });
    expect(mcp.status).toBe(429);
    expect(((await mcp.json()) as { error: { code: string } }).error.code).toBe('rate_limit_exceeded');

    const chat = await fetch(`${gw.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: gw.model, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(429);
    expect(await chat.json()).toMatchObject({ error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' } });
  });
});

describe('the Medication catalogue is cached per FHIR server and caller', () => {
  let gw: RunningGateway;
  const catalogueReads: string[] = [];
  beforeAll(async () => {
    const server = await createEmbeddedFhirServer();
    await server.loadBundles(readSyntheticEhrBundles());
    const fetch: typeof globalThis.fetch = (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      // The catalogue: every Medication, in large pages (src/tools/medication/medications-named.ts).
      if (/\/Medication\?_count=1000(&|$)|\/Medication\?.*_offset=/.test(url)) catalogueReads.push(url);
      return server.fetch(input, init);
    };
    gw = await startGateway({
      noUpstream: true,
      fhir: createMedplumFhirClient({ baseUrl: server.baseUrl, fetch, retries: 0 }),
      env: { API_KEYS: '', API_KEYS_FILE: keyFile, AUDIT_SINK: 'file', AUDIT_FILE: join(dir, 'cache.ndjson'), FHIR_WRITE_TOOLS: 'true' },
    });
  }, 60_000);
  afterAll(() => gw?.close());

  it('read once across ten drug-name calls, and again after a write through the gateway', async () => {
    const drugs = ['metformin', 'lisinopril', 'insulin', 'atorvastatin', 'amlodipine'];
    for (let i = 0; i < 10; i++) {
      const r = await toolCall(gw, 'search_medication_requests', { patient: `S100000${(i % 9) + 1}`, name: drugs[i % drugs.length] });
      expect(r.ok).toBe(true);
    }
    expect(catalogueReads).toHaveLength(1);
    const written = await toolCall(gw, 'record_observation', {
      patient: 'S1000001',
      code: { system: 'http://loinc.org', code: '8867-4', display: 'Heart rate' },
      value_quantity: { value: 72, unit: '/min' },
    });
    expect(written.ok).toBe(true);
    await toolCall(gw, 'search_medication_requests', { patient: 'S1000001', name: 'metformin' });
    expect(catalogueReads).toHaveLength(2);
  }, 60_000);
});

describe('audit retention through the gateway', () => {
  const run = async (env: Record<string, string>, file: string) => {
    const gw = await startGateway({
      noUpstream: true,
      env: {
        API_KEYS: '',
        API_KEYS_FILE: keyFile,
        AUDIT_SINK: 'file',
        AUDIT_FILE: file,
        AUDIT_FILE_MAX_BYTES: '4096',
        AUDIT_FILE_MAX_TOTAL_BYTES: '12288',
        RATE_LIMIT_PER_MINUTE: '0',
        FHIR_SEED: 'true',
        LOG_LEVEL: 'warn',
        ...env,
      },
    });
    try {
      for (let i = 0; i < 30; i++) await fetch(`${gw.baseUrl}/fhir/Patient/S1000001`, { headers: { authorization: `Bearer ${key.sys}` } });
      return gw.logs.map((l) => JSON.parse(l) as { msg: string; err?: string; file?: string });
    } finally {
      await gw.close();
    }
  };

  it('past AUDIT_FILE_MAX_TOTAL_BYTES the oldest files are deleted and each deletion is logged', async () => {
    const logs = await run({}, join(dir, 'retained', 'audit.ndjson'));
    const deleted = logs.filter((l) => l.msg.startsWith('audit file deleted'));
    expect(deleted.length).toBeGreaterThan(0);
    expect(deleted[0].file).toContain(join(dir, 'retained', 'audit.ndjson.'));
  }, 60_000);

  it('with AUDIT_FILE_DELETE_OLDEST=false the refused writes are logged with the reason', async () => {
    const logs = await run({ AUDIT_FILE_DELETE_OLDEST: 'false' }, join(dir, 'refused', 'audit.ndjson'));
    const refused = logs.filter((l) => l.msg === 'audit record not written');
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0].err).toMatch(/audit storage full: .*AUDIT_FILE_MAX_TOTAL_BYTES/);
    expect(logs.some((l) => l.msg.startsWith('audit file deleted'))).toBe(false);
  }, 60_000);
});
