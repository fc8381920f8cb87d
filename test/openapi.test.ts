// Issue 13: GET /openapi.json is a valid OpenAPI 3.1 document (the official 3.1 schema, and every component schema
// compiled by Ajv in strict JSON Schema 2020-12 mode), and real answers of a live gateway (the official openai SDK,
// a tool loop against the embedded FHIR server, a stream, the errors) validate against the schemas it documents.
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { script, wireUsage } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';

const FIND = { family: 'Iwasaki', given: 'Farrah', birthdate: '1981-10-21' };
type Json = Record<string, any>;

let gw: RunningGateway;
let doc: Json;
let ajv: Ajv2020;

/** Errors of `value` against the documented component schema `name` (empty: valid). */
function violations(name: string, value: unknown): string[] {
  const validate = ajv.getSchema(`https://gateway.test/openapi.json#/components/schemas/${name}`);
  if (!validate) throw new Error(`no component schema ${name}`);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

/** The documented schema of one response (status, media type) of one operation. */
function documented(path: string, method: string, status: number): string {
  const media = doc.paths[path][method].responses[String(status)]?.content?.['application/json'];
  if (!media) throw new Error(`${method.toUpperCase()} ${path} documents no JSON ${status}`);
  return (media.schema.$ref as string).split('/').pop()!;
}

async function getJson(path: string, auth = true): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${gw.baseUrl}${path}`, { headers: auth ? { authorization: `Bearer ${gw.apiKey}` } : {} });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  gw = await startGateway({ env: { SERVER_TOOLS: 'true', FHIR_SEED: 'true' } });
  const res = await fetch(`${gw.baseUrl}/openapi.json`);
  expect(res.status).toBe(200);
  doc = (await res.json()) as Json;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema({ $id: 'https://gateway.test/openapi.json', components: doc.components });
});
afterAll(async () => {
  await gw?.close();
});

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('has component schemas that compile in strict JSON Schema 2020-12', () => {
    const strict = new Ajv2020({ strict: true, allErrors: true });
    strict.addSchema({ $id: 'https://strict.test/doc', $defs: {} });
    const names = Object.keys(doc.components.schemas);
    expect(names).toEqual(
      expect.arrayContaining(['ChatCompletionRequest', 'ChatCompletion', 'ChatCompletionChunk', 'ErrorEnvelope', 'FhirAgent', 'ModelList']),
    );
    for (const name of names) {
      // Refs point at #/components/schemas/X: compile each with its siblings under $defs instead.
      const text = JSON.stringify(doc.components.schemas[name]).replaceAll('#/components/schemas/', '#/$defs/');
      const defs = JSON.parse(JSON.stringify(doc.components.schemas).replaceAll('#/components/schemas/', '#/$defs/'));
      expect(() => strict.compile({ ...JSON.parse(text), $defs: defs }), name).not.toThrow();
    }
  });

  it('documents the chat request, stream, errors, fhir_agent, models, health, ready and the bearer scheme', () => {
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/chat/completions', '/v1/models', '/v1/models/{model}', '/health', '/ready', '/metrics']),
    );
    const chat = doc.paths['/v1/chat/completions'].post;
    expect(Object.keys(chat.responses['200'].content)).toEqual(['application/json', 'text/event-stream']);
    expect(doc.components.schemas.ChatCompletionRequest.properties.model.const).toBe(gw.model);
    expect(doc.components.schemas.ChatCompletionRequest.properties.server_tools).toBeDefined();
    expect(doc.components.schemas.ChatCompletion.properties.fhir_agent).toEqual({ $ref: '#/components/schemas/FhirAgent' });
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearer: [] }]);
    // A request missing its messages is not a valid request by the document either.
    expect(violations('ChatCompletionRequest', { model: gw.model })).not.toEqual([]);
  });
});

describe('real answers validate against the documented schemas', () => {
  it('a non-streamed tool loop through the openai SDK (fhir_agent with a FHIR request)', async () => {
    script(gw, [
      { toolCalls: [{ id: 'c1', name: 'find_patients', args: FIND }], usage: wireUsage(100, 10, 40) },
      { content: 'Found her.', usage: wireUsage(150, 5) },
    ]);
    const request = { model: gw.model, messages: [{ role: 'user' as const, content: 'find Farrah' }] };
    expect(violations('ChatCompletionRequest', request)).toEqual([]);
    const raw = (await gw.client.chat.completions.create(request).asResponse()).json() as Promise<Json>;
    const body = await raw;
    expect(body.fhir_agent.tool_calls[0].fhir_requests.length).toBeGreaterThan(0);
    expect(violations(documented('/v1/chat/completions', 'post', 200), body)).toEqual([]);
    // The check can fail: a wrong type in the same body is caught.
    expect(violations('ChatCompletion', { ...body, created: 'yesterday' })).not.toEqual([]);
  });

  it('every chunk of a streamed tool loop, usage and fhir_agent events included', async () => {
    script(gw, [
      { reasoning: 'look her up', toolCalls: [{ id: 'c2', name: 'find_patients', args: FIND }], usage: wireUsage(100, 10) },
      { content: 'Found her.', usage: wireUsage(150, 5) },
    ]);
    const stream = await gw.client.chat.completions.create({
      model: gw.model,
      messages: [{ role: 'user', content: 'find Farrah' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: Json[] = [];
    for await (const c of stream) chunks.push(c as Json);
    expect(chunks.some((c) => c.fhir_agent?.event === 'done')).toBe(true);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 250 });
    for (const c of chunks) expect(violations('ChatCompletionChunk', c)).toEqual([]);
  });

  it('errors, models, health and ready', async () => {
    const bad = await fetch(`${gw.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: gw.model, messages: [], temperature: 9 }),
    });
    expect(bad.status).toBe(400);
    expect(violations(documented('/v1/chat/completions', 'post', 400), await bad.json())).toEqual([]);
    const noKey = await getJson('/v1/models', false);
    expect(noKey.status).toBe(401);
    expect(violations(documented('/v1/models', 'get', 401), noKey.body)).toEqual([]);
    const models = await getJson('/v1/models');
    expect(violations(documented('/v1/models', 'get', 200), models.body)).toEqual([]);
    const one = await getJson(`/v1/models/${gw.model}`);
    expect(violations(documented('/v1/models/{model}', 'get', 200), one.body)).toEqual([]);
    const missing = await getJson('/v1/models/nobody/else');
    expect(missing.status).toBe(404);
    expect(violations(documented('/v1/models/{model}', 'get', 404), missing.body)).toEqual([]);
    // An undocumented method on a documented path: 405 naming the methods there are (schemathesis's ST204).
    const put = await fetch(`${gw.baseUrl}/v1/models`, { method: 'PUT', headers: { authorization: `Bearer ${gw.apiKey}` } });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, HEAD');
    expect(violations('ErrorEnvelope', await put.json())).toEqual([]);
    const unknown = await getJson('/v2/nothing', false);
    expect(unknown.status).toBe(404);
    const health = await getJson('/health', false);
    expect(violations(documented('/health', 'get', 200), health.body)).toEqual([]);
    const ready = await getJson('/ready', false);
    expect(violations(documented('/ready', 'get', ready.status), ready.body)).toEqual([]);
  });
});
