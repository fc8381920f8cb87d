// The MCP server over streamable HTTP at /mcp (issue 13), driven by the official SDK's own Client against a live
// gateway on a loopback port: the tool list is the tools' own (zod-generated) definitions, calls answer the agent
// loop's compact summaries, failures are results with isError, and /mcp has /fhir's keys, scopes and audit.
// By the specification (2025-06-18, issue 29): tools that declare their result have an outputSchema and answer
// structuredContent, which Ajv checks here on every search tool over the synthetic EHR; an unknown tool and bad
// arguments are JSON-RPC errors (-32602); a tool that throws is an isError result with an id and nothing of its text.
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditEvent } from '@medplum/fhirtypes';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, executeTool, toolRegistry, tools } from '../src/tools/index.ts';
import { createApiKey } from '../src/policies/auth/create-api-key.ts';
import { IDEMPOTENCY_META } from '../src/edge/mcp/mcp-server-factory.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { writeApiKeysFile } from './support/api-keys-file.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';

const dir = mkdtempSync(join(tmpdir(), 'mcp-http-'));
const made = {
  reader: createApiKey({ id: 'mcp-reader', scopes: 'system/*.rs' }),
  writer: createApiKey({ id: 'mcp-writer', scopes: 'system/*.cruds tools:write' }),
  obsOnly: createApiKey({ id: 'mcp-obs-only', scopes: 'system/Observation.rs' }),
};
const keyFile = join(dir, 'keys.yaml');
const key = writeApiKeysFile(keyFile, made);
const auditFile = join(dir, 'audit.ndjson');

/** Two tools a deployment adds (defineTool): one with a declared result, one that fails inside. */
const customTools = [
  defineTool({
    name: 'echo_note',
    description: 'Echoes a note (a test tool).',
    inputSchema: z.object({ note: z.string().min(1).max(50) }),
    outputSchema: z.object({ note: z.string(), length: z.number().int() }),
    write: false,
    execute: async ({ note }) => ({ ok: true, content: { note, length: note.length } }),
  }),
  defineTool({
    name: 'always_fails',
    description: 'Throws (a test tool).',
    inputSchema: z.object({}),
    write: false,
    execute: async () => {
      throw new Error('db password hunter2 rejected');
    },
  }),
];
const READ_TOOLS = [...[...toolRegistry.values()].filter((t) => !t.write).map((t) => t.name), 'echo_note', 'always_fails'];
const WRITE_TOOLS = [...toolRegistry.values()].filter((t) => t.write).map((t) => t.name);

let gw: RunningGateway;
const clients: Client[] = [];

async function connect(apiKey: string | undefined, base = gw.baseUrl): Promise<Client> {
  const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } });
  const client = new Client({ name: 'mcp-http-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
const textOf = (r: CallToolResult) => (r.content[0] as { type: 'text'; text: string }).text;
const resultOf = (r: CallToolResult) => JSON.parse(textOf(r));

function auditEvents(): AuditEvent[] {
  return readFileSync(auditFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent);
}
const byKeyAndTool = (callerId: string, tool: string) => (e: AuditEvent) =>
  e.agent[0]?.altId === callerId && e.agent[1]?.who?.display === `fhir-agent-gateway tool ${tool}`;

beforeAll(async () => {
  gw = await startGateway({
    noUpstream: true,
    env: { API_KEYS_FILE: keyFile, FHIR_SEED: 'true', FHIR_WRITE_TOOLS: 'true', AUDIT_SINK: 'file', AUDIT_FILE: auditFile },
    customTools,
  });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await gw?.close();
});

describe('tools/list', () => {
  it('lists the read tools with the names, descriptions and input schemas src/tools/ generates from zod', async () => {
    const { tools: listed } = await (await connect(key.reader)).listTools();
    expect(listed.map((t) => t.name)).toEqual(READ_TOOLS);
    for (const t of listed.filter((l) => toolRegistry.has(l.name))) {
      const own = tools.find((d) => d.function.name === t.name)!.function;
      expect(t.description).toBe(own.description);
      expect(t.inputSchema).toEqual(own.parameters);
      expect(t.annotations).toMatchObject({ readOnlyHint: true });
    }
  });

  it('lists the write tools only for a key that may write', async () => {
    const { tools: listed } = await (await connect(key.writer)).listTools();
    expect(listed.map((t) => t.name)).toEqual([
      ...READ_TOOLS.filter((n) => toolRegistry.has(n)),
      ...WRITE_TOOLS,
      'echo_note',
      'always_fails',
    ]);
    expect(listed.find((t) => t.name === 'record_observation')!.annotations).toMatchObject({ readOnlyHint: false });
    expect(listed.find((t) => t.name === 'record_observation')!.inputSchema).toEqual(
      tools.find((d) => d.function.name === 'record_observation')!.function.parameters,
    );
  });
});

describe('tools/call', () => {
  it('a search answers the same compact summary the agent loop gets', async () => {
    const result = await call(await connect(key.reader), 'find_patients', { family: 'Iwasaki', birthdate: '1981' });
    expect(result.isError).toBe(false);
    const summary = resultOf(result);
    expect(summary).toMatchObject({
      ok: true,
      content: { returned: 1, results: [{ resourceType: 'Patient', id: 'S1000002', name: 'Farrah N Iwasaki', birthDate: '1981-10-21' }] },
    });
    // The loop's tool message for the same call, run directly against the same store.
    const fhir = createMedplumFhirClient({ baseUrl: gw.fhirServer!.baseUrl, fetch: gw.fhirServer!.fetch, retries: 0 });
    const direct = await executeTool('find_patients', JSON.stringify({ family: 'Iwasaki', birthdate: '1981' }), {
      fhir,
      now: () => new Date(),
      writesEnabled: false,
      callId: 'direct',
    });
    expect(textOf(result)).toBe(JSON.stringify(direct));
  });

  it("a continuation's cursor is followed only as sealed: a URL swapped for another patient's search is ignored", async () => {
    const reader = await connect(key.reader);
    const two = resultOf(await call(reader, 'search_observations', { patient: 'S1000002', count: 2 })).content;
    const first = resultOf(await call(reader, 'search_observations', { patient: 'S1000002', count: 1 })).content;
    const handle = JSON.parse(Buffer.from(first.continuation, 'base64url').toString('utf8'));
    const next = resultOf(await call(reader, 'search_observations', { patient: 'S1000002', continuation: first.continuation })).content;
    expect(next.results[0].id).toBe(two.results[1].id);
    // The same sealed handle with its URL pointed at another patient's observations.
    const url = new URL(handle.cursor.url);
    url.searchParams.set('patient', 'Patient/S1000001');
    url.searchParams.set('_offset', '0');
    const forged = Buffer.from(JSON.stringify({ ...handle, cursor: { ...handle.cursor, url: url.toString() } })).toString('base64url');
    const answer = resultOf(await call(reader, 'search_observations', { patient: 'S1000002', continuation: forged })).content;
    // Its seal no longer holds: the arguments alone, from the first match (issue 28).
    expect(answer.results[0].id).toBe(two.results[0].id);
    expect(JSON.stringify(answer)).not.toContain('S1000001');
  });

  it('bad arguments are a JSON-RPC error (-32602) naming each field', async () => {
    const error = await call(await connect(key.reader), 'find_patients', { birthdate: 'last spring', count: 'ten' }).catch((e) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error.code).toBe(ErrorCode.InvalidParams);
    expect(error.message).toContain('Invalid arguments for find_patients');
    expect(error.data).toEqual(
      expect.arrayContaining([
        { path: 'birthdate', message: 'must be YYYY, YYYY-MM or YYYY-MM-DD' },
        expect.objectContaining({ path: 'count' }),
      ]),
    );
  });

  it('an unknown tool is a JSON-RPC error (-32602) listing the tools there are', async () => {
    const error = await call(await connect(key.reader), 'drop_database', {}).catch((e) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringContaining('No tool named "drop_database"') });
    expect(error.data).toMatchObject({ available: expect.arrayContaining(READ_TOOLS) });
  });

  it("a tool's own failure is an isError result: internal_error with an id, its text in the log only", async () => {
    const result = await call(await connect(key.reader), 'always_fails', {});
    expect(result.isError).toBe(true);
    const { error } = resultOf(result);
    expect(error).toMatchObject({ code: 'internal_error', details: { error_id: expect.stringMatching(/^[0-9a-f-]{36}$/) } });
    expect(error.message).toContain(error.details.error_id);
    expect(textOf(result)).not.toContain('hunter2');
    const logged = gw.logs.find((l) => l.includes(error.details.error_id))!;
    expect(JSON.parse(logged)).toMatchObject({
      tool: 'always_fails',
      msg: 'tool failed',
      err: { message: 'db password hunter2 rejected' },
    });
  });

  it('an added tool with a declared result lists its outputSchema and answers structuredContent beside the text', async () => {
    const client = await connect(key.reader);
    const { tools: listed } = await client.listTools();
    expect(listed.find((t) => t.name === 'echo_note')!.outputSchema).toMatchObject({ type: 'object', required: ['note', 'length'] });
    expect(listed.find((t) => t.name === 'always_fails')!.outputSchema).toBeUndefined();
    const result = await call(client, 'echo_note', { note: 'hello' });
    expect(result.structuredContent).toEqual({ note: 'hello', length: 5 });
    expect(resultOf(result)).toEqual({ ok: true, content: { note: 'hello', length: 5 } });
  });

  it('a write tool runs for a key that may write, and is refused for one that may not', async () => {
    const heartRate = {
      patient: 'S1000002',
      code: { system: 'http://loinc.org', code: '8867-4', display: 'Heart rate' },
      value_quantity: { value: 64, unit: '/min' },
      effective_date_time: '2025-06-15T09:30:00Z',
    };
    const written = await call(await connect(key.writer), 'record_observation', heartRate);
    expect(written.isError).toBe(false);
    expect(resultOf(written).written).toEqual([{ resourceType: 'Observation', id: expect.any(String), created: true }]);

    // Hidden from the reader's list; called anyway, its key's scopes refuse the create.
    const refused = await call(await connect(key.reader), 'record_observation', heartRate);
    expect(refused.isError).toBe(true);
    expect(resultOf(refused).error).toMatchObject({ code: 'forbidden', message: expect.stringContaining('create on Observation') });
  });

  it('a write retried with the same idempotency key in _meta is written once; without one, each call writes', async () => {
    const writer = await connect(key.writer);
    const bp = {
      patient: 'S1000002',
      code: { system: 'http://loinc.org', code: '85354-9' },
      blood_pressure: { systolic: 121, diastolic: 79 },
    };
    const withKey = () =>
      writer.callTool({
        name: 'record_observation',
        arguments: bp,
        _meta: { [IDEMPOTENCY_META]: 'retry-me-1' },
      }) as Promise<CallToolResult>;
    const first = resultOf(await withKey());
    const retry = resultOf(await withKey());
    expect(first.written).toEqual([{ resourceType: 'Observation', id: expect.any(String), created: true }]);
    expect(retry.written).toEqual([{ resourceType: 'Observation', id: first.written[0].id, created: false }]);
    const plain = [resultOf(await call(writer, 'record_observation', bp)), resultOf(await call(writer, 'record_observation', bp))];
    expect(new Set(plain.map((r) => r.written[0].id)).size).toBe(2);

    const badKey = await writer
      .callTool({
        name: 'record_observation',
        arguments: bp,
        _meta: { [IDEMPOTENCY_META]: 7 },
      })
      .catch((e) => e);
    expect(badKey).toMatchObject({ code: ErrorCode.InvalidParams, data: [{ path: `_meta.${IDEMPOTENCY_META}` }] });
  });
});

describe('outputSchema (Ajv, draft 2020-12)', () => {
  it('validates every structured result of the built-in search tools on the synthetic EHR, summaries and raw', async () => {
    const client = await connect(key.reader);
    const { tools: listed } = await client.listTools();
    const searchTools = listed.filter((t) => t.name.startsWith('search_') || t.name === 'find_patients');
    expect(searchTools.length).toBe(13);
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    let checked = 0;
    for (const tool of searchTools) {
      expect(tool.outputSchema, tool.name).toBeDefined();
      const validate = ajv.compile(tool.outputSchema!);
      const patients = ['S1000001', 'S1000002', 'S1000003', 'S1000004', 'S1000005'];
      const argsList =
        tool.name === 'find_patients'
          ? [{ name: 'a' }, { gender: 'female', raw: true }]
          : patients.flatMap((p) => [{ patient: p }, { patient: p, raw: true, count: 3 }]);
      for (const args of argsList) {
        const result = await call(client, tool.name, args);
        expect(result.isError, `${tool.name} ${JSON.stringify(args)}: ${textOf(result)}`).toBe(false);
        expect(validate(result.structuredContent), `${tool.name}: ${JSON.stringify(validate.errors)}`).toBe(true);
        expect(result.structuredContent).toEqual(resultOf(result).content);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  }, 120_000);
});

describe('keys and scopes, as on /fhir', () => {
  const post = (headers: Record<string, string>) =>
    fetch(`${gw.baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

  it('a missing or wrong key is a 401, from the SDK client too', async () => {
    for (const headers of [{}, { authorization: 'Bearer sk-not-a-key' }] as Array<Record<string, string>>) {
      const res = await post(headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect((await res.json()).error.code).toBe('invalid_api_key');
    }
    await expect(connect('sk-not-a-key')).rejects.toMatchObject({ code: 401, message: expect.stringContaining('Incorrect API key') });
  });

  it('a key without the scope cannot call a tool that needs it; one with it can', async () => {
    const client = await connect(key.obsOnly);
    const refused = await call(client, 'find_patients', { family: 'Iwasaki' });
    expect(refused.isError).toBe(true);
    expect(resultOf(refused).error).toMatchObject({ code: 'forbidden', message: expect.stringContaining('search on Patient') });
    const allowed = await call(client, 'search_observations', { patient: 'S1000002', count: 2 });
    expect(allowed.isError).toBe(false);
    expect(resultOf(allowed).content.returned).toBe(2);
  });

  it('a JSON-RPC batch runs each call, but no more tools/call than a chat request may run (AGENT_MAX_TOOL_CALLS)', async () => {
    const search = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'search_allergies', arguments: { patient: 'S1000002' } },
    });
    const batch = (n: number) =>
      fetch(`${gw.baseUrl}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key.reader}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(Array.from({ length: n }, (_, i) => search(i + 1))),
      });
    const two = await batch(2);
    expect(two.status).toBe(200);
    const answers = await two.json();
    expect(answers.map((a: any) => [a.id, a.result.isError])).toEqual([
      [1, false],
      [2, false],
    ]);
    const before = auditEvents().filter(byKeyAndTool('mcp-reader', 'search_allergies')).length;
    const tooMany = await batch(33);
    expect(tooMany.status).toBe(400);
    expect((await tooMany.json()).error).toMatchObject({ code: -32600, message: expect.stringContaining('at most 32 tools/call') });
    expect(auditEvents().filter(byKeyAndTool('mcp-reader', 'search_allergies')).length).toBe(before);
  });

  it('a page of another origin may not drive the tools (DNS rebinding), and there are no sessions to GET', async () => {
    const res = await post({ authorization: `Bearer ${key.reader}`, origin: 'http://evil.example' });
    expect(res.status).toBe(403);
    expect((await res.json()).error.message).toMatch(/Origin/);
    const get = await fetch(`${gw.baseUrl}/mcp`, { headers: { authorization: `Bearer ${key.reader}`, accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });

  it("the Origin is checked against the host policy, not the request's own Host (which a rebinding page sets)", async () => {
    const port = new URL(gw.baseUrl).port;
    const rebound = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/mcp',
          method: 'POST',
          headers: {
            host: `rebind.attacker.example:${port}`,
            origin: `http://rebind.attacker.example:${port}`,
            authorization: `Bearer ${key.reader}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
        },
        (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    });
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringContaining('Origin') } });
    // A page served from loopback (the gateway's own origin, or another local port) may.
    for (const origin of [gw.baseUrl, 'http://localhost:5173']) {
      const res = await post({ authorization: `Bearer ${key.reader}`, origin });
      expect(res.status).toBe(200);
    }
  });
});

describe('the audit trail', () => {
  it('records each call’s FHIR interactions under the caller’s key id and the tool’s name, refusals included', async () => {
    const reader = await connect(key.reader);
    const before = auditEvents().filter(byKeyAndTool('mcp-reader', 'search_conditions')).length;
    await call(reader, 'search_conditions', { patient: 'S1000002' });
    await call(reader, 'search_conditions', { patient: 'S1000001' });
    const searches = auditEvents().filter(byKeyAndTool('mcp-reader', 'search_conditions'));
    expect(searches.length - before).toBe(2);
    expect(searches.at(-1)).toMatchObject({
      subtype: [{ code: 'search-type' }],
      outcome: '0',
      agent: [{ altId: 'mcp-reader' }, { requestor: false }],
      // The query's shape (parameter names, no values) and how many it read (issue 28).
      entity: expect.arrayContaining([
        expect.objectContaining({
          type: expect.objectContaining({ code: 'Condition' }),
          role: expect.anything(),
          query: Buffer.from('Condition?patient&_count&_total').toString('base64'),
          detail: [{ type: 'read', valueString: expect.stringMatching(/^\d+$/) }],
        }),
      ]),
    });

    const refusedBefore = auditEvents().filter(byKeyAndTool('mcp-obs-only', 'find_patients')).length;
    await call(await connect(key.obsOnly), 'find_patients', { family: 'Iwasaki' });
    const refused = auditEvents().filter(byKeyAndTool('mcp-obs-only', 'find_patients'));
    expect(refused.length - refusedBefore).toBe(1);
    expect(refused.at(-1)).toMatchObject({ outcome: '4', outcomeDesc: expect.stringContaining('denied') });
    // Neither keys nor search values are recorded.
    const all = readFileSync(auditFile, 'utf8');
    for (const secret of [...Object.values(key), 'Iwasaki']) expect(all).not.toContain(secret);
  });
});

describe('a deployment without FHIR_WRITE_TOOLS', () => {
  it('lists no write tools, even to a key that may write', async () => {
    const readOnly = await startGateway({ noUpstream: true, env: { API_KEYS_FILE: keyFile, FHIR_WRITE_TOOLS: 'false' } });
    try {
      const { tools: listed } = await (await connect(key.writer, readOnly.baseUrl)).listTools();
      expect(listed.map((t) => t.name)).toEqual(READ_TOOLS.filter((n) => toolRegistry.has(n)));
    } finally {
      await Promise.all(clients.splice(0).map((c) => c.close()));
      await readOnly.close();
    }
  });
});
