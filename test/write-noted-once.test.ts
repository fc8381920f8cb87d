// Issue 29 review: one write through a tool is noted once. The write generation (src/vocabulary/fhir/fhir-write-generation.ts)
// is what the tools' cached reference reads of a FHIR server are checked against; the scoped client and the tool
// session both noted the same write, so one tool call counted two. Over real HTTP (POST /mcp tools/call) on the
// composition root, the embedded FHIR server behind the access control's scoped client.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeGateway, type ComposedGateway } from '../src/composition/compose-gateway.ts';
import { loadConfig } from '../src/composition/config.ts';
import { fhirWriteGeneration } from '../src/vocabulary/fhir/fhir-write-generation.ts';

let gateway: ComposedGateway;
let address: string;

beforeAll(async () => {
  gateway = await composeGateway({
    config: loadConfig({ FHIR_SEED: 'false', FHIR_WRITE_TOOLS: 'true', LOG_LEVEL: 'silent' }),
    logger: pino({ level: 'silent' }),
  });
  address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await gateway?.close();
});

async function callTool(name: string, args: Record<string, unknown>): Promise<{ isError?: boolean; structuredContent?: unknown }> {
  const res = await fetch(`${address}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const text = await res.text();
  const json = text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)![1];
  return (JSON.parse(json) as { result: { isError?: boolean; structuredContent?: unknown } }).result;
}

describe('a write through a tool', () => {
  it('moves the write generation of its FHIR server by one', async () => {
    const before = fhirWriteGeneration(gateway.fhir.baseUrl);
    const result = await callTool('record_observation', { patient: 'p1', code_text: 'pain score', value_string: 'mild' });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(fhirWriteGeneration(gateway.fhir.baseUrl)).toBe(before + 1);
  });

  it('a read moves it not at all', async () => {
    const before = fhirWriteGeneration(gateway.fhir.baseUrl);
    const result = await callTool('find_patients', { name: 'Nobody' });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(fhirWriteGeneration(gateway.fhir.baseUrl)).toBe(before);
  });
});
