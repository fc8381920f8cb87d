// Key scopes on the agent's tools with HAPI FHIR as the gateway's FHIR server (FHIR_BASE_URL), and the audit
// written to HAPI (AUDIT_SINK=fhir). The HAPI server is shared with test/hapi-contract.test.ts, whose loader contract
// counts every Patient and Observation on it, so this file writes none: it checks what is refused before anything
// reaches HAPI, what is allowed reaching it, and the AuditEvents (a type nobody counts). The after-the-fact check
// (a read that turns out to be another patient's) is the same code for every backend: test/api-key-scopes.test.ts.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditEvent } from '@medplum/fhirtypes';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createApiKey } from '../src/policies/auth/create-api-key.ts';
import type { ProvidedHapiBackend } from './support/fhir-backends-setup.ts';
import { script, toolMessages, toolNames } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';

const hapi: ProvidedHapiBackend = inject('hapiBackend') ?? {
  skip: 'test/support/fhir-backends-setup.ts is not a globalSetup in vitest.config.ts',
};
const baseUrl = 'baseUrl' in hapi ? hapi.baseUrl : '';
if ('skip' in hapi) console.warn(`[hapi scopes] skipping: ${hapi.skip}`);

// Unique per run: the AuditEvents of an earlier run on a reused server must not count.
const run = Math.random().toString(36).slice(2, 8);
const made = {
  reader: createApiKey({ id: `reader-${run}`, scopes: 'system/*.rs chat' }),
  ward: createApiKey({ id: `ward-${run}`, scopes: 'patient/*.rs chat', patients: ['S1000002'] }),
};

describe.skipIf('skip' in hapi)('scopes on the tools with HAPI FHIR', () => {
  if ('error' in hapi) {
    it('starts', () => expect.fail(hapi.error));
    return;
  }
  let gw: RunningGateway;
  const chat = (k: string) =>
    new OpenAI({ baseURL: `${gw.baseUrl}/v1`, apiKey: k, maxRetries: 0, timeout: 60_000 }).chat.completions.create({
      model: gw.model,
      messages: [{ role: 'user', content: 'go' }],
    }) as Promise<any>;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hapi-scopes-'));
    const keyFile = join(dir, 'keys.yaml');
    writeFileSync(keyFile, `keys:\n${made.reader.entry}\n${made.ward.entry}\n`);
    gw = await startGateway({
      env: { SERVER_TOOLS: 'true', FHIR_BASE_URL: baseUrl, FHIR_WRITE_TOOLS: 'true', API_KEYS_FILE: keyFile, AUDIT_SINK: 'fhir' },
    });
  });
  afterAll(() => gw?.close());

  it('a key without write scope is not offered the write tools; a write call is forbidden before HAPI sees it', async () => {
    const s = script(gw, [
      {
        toolCalls: [
          {
            id: `hw-${run}`,
            name: 'record_observation',
            args: {
              patient: 'S1000002',
              code: { system: 'http://loinc.org', code: '8867-4' },
              value_quantity: { value: 72, unit: '/min' },
            },
          },
        ],
      },
      { content: 'Not recorded.' },
    ]);
    const res = await chat(made.reader.key);
    expect(toolNames(s.bodies()[0])).not.toContain('record_observation');
    expect(toolMessages(s.bodies()[1])[0].result).toMatchObject({ ok: false, error: { code: 'forbidden', status: 403 } });
    expect(res.fhir_agent.tool_calls[0].fhir_requests).toEqual([]);
    expect(res.choices[0].message.content).toBe('Not recorded.');
  });

  it('a patient-scoped key is refused another patient before HAPI sees it, and reaches HAPI for its own (confined)', async () => {
    const s = script(gw, [
      {
        toolCalls: [
          { id: 'h-1', name: 'search_observations', args: { patient: 'S1000001' } },
          { id: 'h-2', name: 'read_resource', args: { resourceType: 'Patient', id: 'S1000001' } },
          { id: 'h-3', name: 'find_patients', args: { family: 'Jorgensen' } },
          { id: 'h-4', name: 'search_observations', args: { patient: 'S1000002' } },
        ],
      },
      { content: 'Done.' },
    ]);
    const res = await chat(made.ward.key);
    const results = Object.fromEntries(toolMessages(s.bodies()[1]).map((m) => [m.tool_call_id, m.result]));
    const calls = Object.fromEntries(res.fhir_agent.tool_calls.map((c: any) => [c.id, c]));
    for (const id of ['h-1', 'h-2']) {
      expect(results[id], id).toMatchObject({ ok: false, error: { code: 'forbidden' } });
      expect(calls[id].fhir_requests, id).toEqual([]);
    }
    // A search that names no patient reaches HAPI confined to the key's patients: the compartment is in the URL.
    expect(results['h-3']).toMatchObject({ ok: true });
    expect(decodeURIComponent(calls['h-3'].fhir_requests[0].url)).toContain('_id=S1000002');
    expect(results['h-4']).toMatchObject({ ok: true });
    expect(calls['h-4'].fhir_requests).toContainEqual(expect.objectContaining({ method: 'GET', status: 200 }));
    expect(calls['h-4'].fhir_requests[0].url).toContain(`${baseUrl}/Observation?`);
  });

  it('the tools’ AuditEvents are created on HAPI, refusals included', async () => {
    const auditOf = async (): Promise<AuditEvent[]> => {
      const bundle = await (await fetch(`${baseUrl}/AuditEvent?altid=ward-${run}&_count=100`)).json();
      return (bundle.entry ?? []).map((e: { resource: AuditEvent }) => e.resource);
    };
    let events = await auditOf();
    if (events.length < 4) {
      // hapi-contract.test.ts empties the shared server once ($expunge) when it starts; if that fell between the
      // previous test and this one, make the records again.
      script(gw, [
        {
          toolCalls: [
            { id: 'h-5', name: 'read_resource', args: { resourceType: 'Patient', id: 'S1000001' } },
            { id: 'h-6', name: 'search_observations', args: { patient: 'S1000002' } },
          ],
        },
        { content: 'ok' },
      ]);
      await chat(made.ward.key);
      events = await auditOf();
    }
    const refused = events.find((e) => e.outcome === '4' && e.subtype?.[0]?.code === 'read');
    expect(refused).toMatchObject({
      outcomeDesc: expect.stringMatching(/^403 denied/),
      agent: [{ altId: `ward-${run}` }, { who: { display: 'fhir-agent-gateway tool read_resource' } }],
    });
    // Patient/S1000001 may not exist on HAPI, which refuses references to unknown resources: then the record
    // names it as the entity's name instead (AUDIT_SINK=fhir docs).
    const names = (refused!.entity ?? []).map((x) => x.what?.reference ?? x.name);
    expect(names).toContain('Patient/S1000001');
    expect(events.some((e) => e.outcome === '0' && e.subtype?.[0]?.code === 'search-type')).toBe(true);
  });
});
