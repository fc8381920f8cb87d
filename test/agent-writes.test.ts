// Write tools through the loop: refused when writes are off (and never offered), idempotent when on (by caller,
// conversation, tool_call id and arguments). The embedded FHIR store is checked directly, by the tool-call identifier the write tools stamp on resources.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fhirSearch, generated, script, streamed, toolMessages, toolNames, type Collected } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';

type Mode = 'create' | 'stream';
const MODES: Mode[] = ['create', 'stream'];
const TOOL_CALL_SYSTEM = 'urn:fhir-agent-gateway:tool-call';
const WRITE_TOOLS = ['record_observation', 'order_medication', 'order_service'];
const QUESTION = { role: 'user' as const, content: 'Record a heart rate of 72/min for S1000002.' };
const HEART_RATE = {
  patient: 'S1000002',
  code: { system: 'http://loinc.org', code: '8867-4', display: 'Heart rate' },
  value_quantity: { value: 72, unit: '/min' },
  effective_date_time: '2025-06-15T09:00:00Z',
};

async function ask(gw: RunningGateway, mode: Mode, body: Record<string, unknown>): Promise<{ res: any; stream?: Collected }> {
  if (mode === 'create') return { res: await generated(gw, body) };
  const stream = await streamed(gw, { ...body, stream_options: { include_usage: true } });
  return { res: stream.final, stream };
}

/** Resources a write tool made for this tool_call id. */
async function writtenBy(gw: RunningGateway, type: string, callId: string): Promise<any[]> {
  const bundle = await fhirSearch(gw, `${type}?identifier=${encodeURIComponent(`${TOOL_CALL_SYSTEM}|${callId}`)}`);
  return (bundle.entry ?? []).map((e: any) => e.resource);
}

async function heartRates(gw: RunningGateway): Promise<number> {
  const bundle = await fhirSearch(
    gw,
    `Observation?patient=Patient/S1000002&code=${encodeURIComponent('http://loinc.org|8867-4')}&_count=200`,
  );
  return bundle.total ?? (bundle.entry ?? []).length;
}

describe('writes disabled (default)', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { SERVER_TOOLS: 'true', FHIR_SEED: 'true' } });
  });
  afterAll(() => gw?.close());

  it.each(MODES)('a write call is refused back to the model; nothing is written (%s)', async (mode) => {
    const before = await heartRates(gw);
    const s = script(gw, [
      { reasoning: 'Record it.', toolCalls: [{ id: `off-${mode}`, name: 'record_observation', args: HEART_RATE }] },
      { content: 'I cannot write to the record; please enter HR 72/min manually.' },
    ]);
    const { res } = await ask(gw, mode, { messages: [QUESTION] });

    for (const name of WRITE_TOOLS) expect(toolNames(s.bodies()[0])).not.toContain(name);
    expect(s.requests).toHaveLength(2);
    const [tm] = toolMessages(s.bodies()[1]);
    expect(tm).toMatchObject({ tool_call_id: `off-${mode}`, result: { ok: false, error: { code: 'writes_disabled' } } });

    expect(res.choices[0]).toMatchObject({
      finish_reason: 'stop',
      message: { content: 'I cannot write to the record; please enter HR 72/min manually.' },
    });
    expect(res.choices[0].message.tool_calls ?? []).toEqual([]);
    expect(res.fhir_agent.written).toEqual([]);
    expect(res.fhir_agent.tool_calls).toMatchObject([
      { id: `off-${mode}`, name: 'record_observation', ok: false, error: { code: 'writes_disabled' }, fhir_requests: [] },
    ]);
    expect(await writtenBy(gw, 'Observation', `off-${mode}`)).toEqual([]);
    expect(await heartRates(gw)).toBe(before);
  });
});

describe('writes enabled (FHIR_WRITE_TOOLS=true)', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { SERVER_TOOLS: 'true', FHIR_SEED: 'true', FHIR_WRITE_TOOLS: 'true' } });
  });
  afterAll(() => gw?.close());

  const recordTurn = (id: string) => [
    { reasoning: 'Record it.', toolCalls: [{ id, name: 'record_observation', args: HEART_RATE }] },
    { content: 'Recorded heart rate 72/min.' },
  ];

  it.each(MODES)('writes exactly once, and a retried request with the same call id writes nothing new (%s)', async (mode) => {
    const id = `on-${mode}`;
    const before = await heartRates(gw);

    const s = script(gw, recordTurn(id));
    const { res } = await ask(gw, mode, { messages: [QUESTION] });
    for (const name of WRITE_TOOLS) expect(toolNames(s.bodies()[0])).toContain(name);
    const [tm] = toolMessages(s.bodies()[1]);
    expect(tm!.result).toMatchObject({ ok: true, content: { created: true } });
    const saved = await writtenBy(gw, 'Observation', id);
    expect(saved).toHaveLength(1);
    expect(saved[0]).toMatchObject({
      resourceType: 'Observation',
      status: 'final',
      subject: { reference: 'Patient/S1000002' },
      effectiveDateTime: '2025-06-15T09:00:00Z',
      valueQuantity: { value: 72, unit: '/min' },
      code: { coding: [{ system: 'http://loinc.org', code: '8867-4' }] },
    });
    const written = [{ resourceType: 'Observation', id: saved[0].id, created: true }];
    expect(res.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'Recorded heart rate 72/min.' } });
    expect(res.fhir_agent.written).toEqual(written);
    expect(res.fhir_agent.tool_calls).toMatchObject([{ id, ok: true, written }]);
    expect(res.fhir_agent.tool_calls[0].fhir_requests).toContainEqual(expect.objectContaining({ method: 'POST', status: 201 }));
    expect(await heartRates(gw)).toBe(before + 1);

    // The client retries the whole request; the model repeats the same call id.
    const s2 = script(gw, recordTurn(id));
    const { res: retried } = await ask(gw, mode, { messages: [QUESTION] });
    expect(toolMessages(s2.bodies()[1])[0]!.result).toMatchObject({ ok: true, content: { created: false } });
    expect(retried.fhir_agent.written).toEqual([{ resourceType: 'Observation', id: saved[0].id, created: false }]);
    expect(await writtenBy(gw, 'Observation', id)).toHaveLength(1);
    expect(await heartRates(gw)).toBe(before + 1);
  });

  it('a model repeating a call id later in the same conversation gets a fresh id: a new call, a new write', async () => {
    const before = await heartRates(gw);
    script(gw, [
      { toolCalls: [{ id: 'call_0', name: 'record_observation', args: HEART_RATE }] },
      { toolCalls: [{ id: 'call_0', name: 'record_observation', args: { ...HEART_RATE, value_quantity: { value: 75, unit: '/min' } } }] },
      { content: 'Both recorded.' },
    ]);
    const res = await generated(gw, { messages: [QUESTION] });
    const ids = res.fhir_agent.tool_calls.map((t: any) => t.id);
    expect(ids[0]).toBe('call_0');
    expect(ids[1]).not.toBe('call_0');
    expect(res.fhir_agent.written.map((w: any) => w.created)).toEqual([true, true]);
    expect(await heartRates(gw)).toBe(before + 2);
  });

  it('the same call id in another conversation is another write, not a retry of the first', async () => {
    const before = await heartRates(gw);
    const byId = (await writtenBy(gw, 'Observation', 'call_0')).length;
    // Models number their calls per conversation (`call_0`); two conversations asking for the same heart rate.
    for (const question of ['Record HR 72/min for S1000002 (morning round).', 'Record HR 72/min for S1000002 (evening round).']) {
      script(gw, [{ toolCalls: [{ id: 'call_0', name: 'record_observation', args: HEART_RATE }] }, { content: 'Recorded.' }]);
      const res = await generated(gw, { messages: [{ role: 'user', content: question }] });
      expect(res.fhir_agent.written.map((w: any) => w.created)).toEqual([true]);
    }
    expect(await heartRates(gw)).toBe(before + 2);
    expect(await writtenBy(gw, 'Observation', 'call_0')).toHaveLength(byId + 2);
  });

  it('the same call id with other arguments is another write', async () => {
    const before = await heartRates(gw);
    for (const value of [80, 81]) {
      script(gw, [
        { toolCalls: [{ id: 'same-id', name: 'record_observation', args: { ...HEART_RATE, value_quantity: { value, unit: '/min' } } }] },
        { content: 'Recorded.' },
      ]);
      await generated(gw, { messages: [QUESTION] });
    }
    expect(await heartRates(gw)).toBe(before + 2);
  });

  it('a write call in a mixed turn runs once; the follow-up fills its result without writing again', async () => {
    const before = await fhirSearch(gw, 'ServiceRequest?subject=Patient/S1000002');
    const order = {
      patient: 'S1000002',
      code: { system: 'http://loinc.org', code: '4548-4', display: 'Hemoglobin A1c' },
      priority: 'stat',
    };
    const notify = { type: 'function' as const, function: { name: 'notify_clinician', parameters: { type: 'object', properties: {} } } };
    script(gw, [
      {
        toolCalls: [
          { id: 'mixed-order', name: 'order_service', args: order },
          { id: 'mixed-notify', name: 'notify_clinician', args: {} },
        ],
      },
    ]);
    const first = await generated(gw, { messages: [QUESTION], tools: [notify] });
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(first.fhir_agent.written).toMatchObject([{ resourceType: 'ServiceRequest', created: true }]);

    const s = script(gw, [{ content: 'Ordered and notified.' }]);
    const follow = await generated(gw, {
      messages: [QUESTION, first.choices[0].message, { role: 'tool', tool_call_id: 'mixed-notify', content: 'ok' }],
      tools: [notify],
    });
    expect(follow.fhir_agent.filled).toEqual([{ tool_call_id: 'mixed-order', source: 'cache' }]);
    expect(follow.fhir_agent.written).toEqual([]);
    expect(toolMessages(s.bodies()[0]).map((t) => t.tool_call_id)).toEqual(['mixed-notify', 'mixed-order']);
    const saved = await writtenBy(gw, 'ServiceRequest', 'mixed-order');
    expect(saved).toHaveLength(1);
    expect(saved[0]).toMatchObject({ status: 'active', intent: 'order', priority: 'stat', code: { coding: [{ code: '4548-4' }] } });
    const after = await fhirSearch(gw, 'ServiceRequest?subject=Patient/S1000002');
    expect(after.total).toBe((before.total ?? 0) + 1);
  });
});
