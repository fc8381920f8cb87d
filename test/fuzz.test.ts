// Fuzz (issue 12): generated and mutated requests to POST /v1/chat/completions (behind it an instant fake model that
// also calls tools with generated arguments), to the embedded FHIR server at /fhir, and generated tool calls to
// executeTool. Never a 500, a crash or an answer slower than 5 s; every answer in its documented envelope.
// FUZZ_SEED and FUZZ_RUNS (cases across the three targets) override the defaults; `npm run fuzz` is the long run.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { MAX_SCHEMA_DEPTH } from '../src/vocabulary/openai/chat-request.ts';
import { parseChatRequest } from '../src/edge/http/to-chat-params.ts';
import { fhirSearch } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { completionReply } from './support/upstream-replies.ts';
import { chatCase } from './fuzz/chat-cases.ts';
import { exerciseChat, exerciseFhir, exerciseTool, KNOWN_DEEP_NESTING, type ToolCase } from './fuzz/exercise.ts';
import { fhirCase } from './fuzz/fhir-cases.ts';
import { fuzzSettings, fuzzTarget, FuzzStats } from './fuzz/fuzz-run.ts';
import { fhirProblem, openAiErrorProblem } from './fuzz/envelopes.ts';
import { deepNesting, serialize } from './fuzz/raw-json.ts';
import { toolCallCase, type ClinicalHints } from './fuzz/tool-call-cases.ts';

const { seed, runs } = fuzzSettings();
// HTTP cases cost more than in-process tool calls: the split keeps the default run near 45 s on two shared cores.
const share = { chat: Math.ceil(runs * 0.35), fhir: Math.ceil(runs * 0.25) };
const split = { ...share, tools: Math.max(1, runs - share.chat - share.fhir) };
/** Vitest's limit per target: generous per case, so only a real hang (caught per request) ends a run early. */
const budget = (cases: number) => 60_000 + cases * 100;
console.log(`fuzz: FUZZ_SEED=${seed} FUZZ_RUNS=${runs} (chat ${split.chat}, fhir ${split.fhir}, tools ${split.tools})`);

let gw: RunningGateway;
let hints: ClinicalHints;
const stats = { chat: new FuzzStats('POST /v1/chat/completions'), fhir: new FuzzStats('/fhir'), tools: new FuzzStats('executeTool') };
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  gw = await startGateway({
    env: {
      SERVER_TOOLS: 'true',
      FHIR_SEED: 'true',
      RATE_LIMIT_PER_MINUTE: '0',
      BODY_LIMIT_BYTES: '1000000',
      IMAGE_MAX_BYTES: '2000',
      UPSTREAM_MAX_RETRIES: '0',
      // Plain keys may write through /fhir (and the model's write tools run) only with this: creates get fuzzed too.
      FHIR_WRITE_TOOLS: 'true',
      // Errors only: a 100k-case run must not keep a log line per request.
      LOG_LEVEL: 'warn',
    },
  });
  const ids = async (query: string) => ((await fhirSearch(gw, query)).entry ?? []).map((e: { resource: { id: string } }) => e.resource.id);
  hints = {
    patientIds: await ids('Patient?_count=25'),
    resourceIds: [...(await ids('Observation?_count=5')), ...(await ids('Condition?_count=5'))],
  };
  expect(hints.patientIds.length).toBeGreaterThan(0);
});

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  const cases = stats.chat.cases + stats.fhir.cases + stats.tools.cases;
  const maxMs = Math.max(stats.chat.maxMs, stats.fhir.maxMs, stats.tools.maxMs);
  console.log(
    [
      `fuzz: FUZZ_SEED=${seed}: ${cases} cases, max latency ${Math.round(maxMs)} ms, unhandled rejections ${unhandled.length}`,
      ...Object.values(stats).map((s) => `  ${s.summary()}`),
    ].join('\n'),
  );
  await gw?.close();
});

describe('fuzz', () => {
  it(`POST /v1/chat/completions: ${split.chat} generated and mutated requests`, { timeout: budget(split.chat) }, async () => {
    await fuzzTarget({
      stats: stats.chat,
      arbitrary: chatCase({ modelId: gw.model, apiKey: gw.apiKey, hints }),
      runs: split.chat,
      seed,
      exercise: (c) => exerciseChat(gw, c),
    });
    expect(stats.chat.failures).toBe(0);
  });

  it(`/fhir: ${split.fhir} searches, reads and writes with odd parameters, ids and bodies`, { timeout: budget(split.fhir) }, async () => {
    await fuzzTarget({
      stats: stats.fhir,
      arbitrary: fhirCase(hints.patientIds),
      runs: split.fhir,
      seed: seed + 1,
      exercise: (c) => exerciseFhir(gw, c),
    });
    expect(stats.fhir.failures).toBe(0);
  });

  it(
    `executeTool: ${split.tools} tool calls with generated arguments against the embedded store`,
    { timeout: budget(split.tools) },
    async () => {
      // A fork: the write tools may run, and what they write stays out of the gateway's store.
      const store = await gw.fhirServer!.fork();
      const fhir = createMedplumFhirClient({ baseUrl: store.baseUrl, fetch: store.fetch, retries: 0 });
      const toolCase: fc.Arbitrary<ToolCase> = fc.record({
        call: toolCallCase(hints),
        writesEnabled: fc.boolean(),
        aborted: fc.oneof({ weight: 20, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
        // The loop always passes an id (ensureToolCallIds); an empty one is the caller's bug, refused as internal_error.
        callId: fc.oneof(fc.stringMatching(/^call_[a-z0-9]{1,12}$/), fc.string({ minLength: 1, maxLength: 80 })),
      });
      await fuzzTarget({
        stats: stats.tools,
        arbitrary: toolCase,
        runs: split.tools,
        seed: seed + 2,
        exercise: (c) => exerciseTool(fhir, c),
      });
      expect(stats.tools.failures).toBe(0);
    },
  );

  it('the gateway is healthy afterwards: /health ok, a plain request answers, nothing unhandled, no prototype polluted', async () => {
    const health = await fetch(`${gw.baseUrl}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok' });
    gw.fake.setHandler(() => completionReply({ content: 'fine' }));
    const res = await gw.client.chat.completions.create({ model: gw.model, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.choices[0]!.message.content).toBe('fine');
    expect(unhandled).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});

describe('bugs the fuzz found', () => {
  // A JSON Schema nested a few thousand levels deep (30 KB of `{"a":`) in tools[].function.parameters or
  // response_format.json_schema.schema once passed validation (both are free-form records) and overflowed the stack
  // where the upstream request is serialised: a 500 internal_error. Their nesting is now bounded (MAX_SCHEMA_DEPTH).
  it.each([
    [
      'tools[0].function.parameters',
      (deep: string, model: string) =>
        `{"model":"${model}","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":${deep}}}]}`,
    ],
    [
      'response_format.json_schema.schema',
      (deep: string, model: string) =>
        `{"model":"${model}","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":${deep}}}}`,
    ],
  ])('deep nesting in %s → 400 naming the field, not 500', async (field, body) => {
    gw.fake.setHandler(() => completionReply({ content: '{}' }));
    const deep = serialize(deepNesting(KNOWN_DEEP_NESTING * 20));
    const res = await fetch(`${gw.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
      body: body(deep, gw.model),
    });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(openAiErrorProblem(text)).toBeUndefined();
    expect(JSON.parse(text)).toMatchObject({ error: { type: 'invalid_request_error', param: field } });
  });

  it.each(['object', 'array'] as const)('a schema nested MAX_SCHEMA_DEPTH deep in %ss is accepted; one level more is not', (kind) => {
    // The schema object itself is the first level.
    const schema = (depth: number) => ({ type: 'object', x: JSON.parse(serialize(deepNesting(depth - 1, kind))) as unknown });
    const request = (depth: number) => ({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      tools: [{ type: 'function', function: { name: 'f', parameters: schema(depth) } }],
    });
    expect(() => parseChatRequest(request(MAX_SCHEMA_DEPTH))).not.toThrow();
    const param = 'tools[0].function.parameters';
    expect(() => parseChatRequest(request(MAX_SCHEMA_DEPTH + 1))).toThrow(expect.objectContaining({ status: 400, param }));
  });

  // A malformed percent escape in the path fails in fastify's router (FST_ERR_BAD_URL), before the app's hooks and
  // error handler: the answer was fastify's own `{"error":"Bad Request","code":"FST_ERR_BAD_URL",…}`, before the API
  // key was checked. src/composition/app.ts's `frameworkErrors` now checks the key, then answers in the edge's envelope.
  it('a bad percent escape in a /v1 path → the OpenAI envelope', async () => {
    const res = await fetch(`${gw.baseUrl}/v1/models/%zz`, { headers: { authorization: `Bearer ${gw.apiKey}` } });
    expect(res.status).toBe(400);
    expect(openAiErrorProblem(await res.text())).toBeUndefined();
  });

  it('a bad percent escape in a /fhir path → an OperationOutcome', async () => {
    const res = await fetch(`${gw.baseUrl}/fhir/Patient/%zz`, { headers: { authorization: `Bearer ${gw.apiKey}` } });
    expect(res.status).toBe(400);
    expect(fhirProblem(res.status, await res.text())).toBeUndefined();
  });

  it('a bad percent escape → 400 in the envelope of its path, key or not: no route matched, so no handler runs', async () => {
    for (const headers of [{ authorization: 'Bearer wrong-key' }, {}] as Array<Record<string, string>>) {
      const v1 = await fetch(`${gw.baseUrl}/v1/models/%zz`, { headers });
      expect(v1.status).toBe(400);
      expect(openAiErrorProblem(await v1.text())).toBeUndefined();
      const fhir = await fetch(`${gw.baseUrl}/fhir/Patient/%zz`, { headers });
      expect(fhir.status).toBe(400);
      expect(fhirProblem(fhir.status, await fhir.text())).toBeUndefined();
    }
  });
});
