// Issue 13: OpenTelemetry traces exported over OTLP/HTTP (JSON) to a real receiver on loopback (a small HTTP server
// here that decodes what the exporter posts). One span per request, per model step, per tool call and per FHIR
// request, nested in that order, with the GenAI attributes; and no message content anywhere in the export.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTelemetry } from '../src/edge/telemetry/create-telemetry.ts';
import { fhirSearch, script, wireUsage } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';

const FIND = { family: 'Iwasaki', given: 'Farrah', birthdate: '1981-10-21' };
const PROMPT = 'Find Farrah Iwasaki, born 1981-10-21, and list her conditions';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status?: { code?: number };
}
interface Receiver {
  url: string;
  bodies: string[];
  paths: string[];
  contentTypes: string[];
  spans(): OtlpSpan[];
  close(): Promise<void>;
}

async function startOtlpReceiver(): Promise<Receiver> {
  const bodies: string[] = [];
  const paths: string[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      paths.push(req.url ?? '');
      contentTypes.push(String(req.headers['content-type']));
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    paths,
    contentTypes,
    spans: () =>
      bodies.flatMap((b) =>
        (JSON.parse(b).resourceSpans as any[]).flatMap((rs) => (rs.scopeSpans as any[]).flatMap((ss) => ss.spans as OtlpSpan[])),
      ),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An attribute's value, unwrapped from OTLP's AnyValue. */
function attr(span: OtlpSpan, key: string): unknown {
  const v = span.attributes.find((a) => a.key === key)?.value;
  if (!v) return undefined;
  if ('arrayValue' in v)
    return ((v.arrayValue as { values?: Array<Record<string, unknown>> }).values ?? []).map((x) => Object.values(x)[0]);
  const raw = Object.values(v)[0];
  return 'intValue' in v ? Number(raw) : raw;
}

let receiver: Receiver;
let gw: RunningGateway;
let patientId = '';

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  gw = await startGateway({ env: { SERVER_TOOLS: 'true', FHIR_SEED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
  patientId = (await fhirSearch(gw, 'Patient?family=Iwasaki')).entry[0].resource.id;

  script(gw, [
    { toolCalls: [{ id: 'call-t1', name: 'find_patients', args: FIND }], usage: wireUsage(100, 10, 40) },
    { content: 'Found her.', usage: wireUsage(150, 5) },
  ]);
  await gw.client.chat.completions.create({ model: gw.model, messages: [{ role: 'user', content: PROMPT }] });

  script(gw, [
    { reasoning: 'I should look her up', toolCalls: [{ id: 'call-t2', name: 'find_patients', args: FIND }], usage: wireUsage(100, 10) },
    { content: 'Found her again.', usage: wireUsage(150, 5) },
  ]);
  const stream = await gw.client.chat.completions.create({
    model: gw.model,
    messages: [{ role: 'user', content: PROMPT }],
    stream: true,
    stream_options: { include_usage: true },
  });
  for await (const _ of stream);
  // Closing the gateway flushes the batch exporter.
  await gw.close();
});
afterAll(async () => {
  await receiver?.close();
});

describe('OTLP/HTTP export', () => {
  it('posts JSON to <endpoint>/v1/traces', () => {
    expect(receiver.bodies.length).toBeGreaterThan(0);
    expect(new Set(receiver.paths)).toEqual(new Set(['/v1/traces']));
    expect(receiver.contentTypes.every((t) => t.startsWith('application/json'))).toBe(true);
    const resource = JSON.parse(receiver.bodies[0]!).resourceSpans[0].resource.attributes;
    expect(resource).toContainEqual({ key: 'service.name', value: { stringValue: 'fhir-agent-gateway' } });
  });

  for (const [label, callId] of [
    ['non-streamed', 'call-t1'],
    ['streamed', 'call-t2'],
  ] as const) {
    it(`${label}: request → model step → tool call → FHIR request, with GenAI attributes`, () => {
      const spans = receiver.spans();
      const byId = new Map(spans.map((s) => [s.spanId, s]));
      const tool = spans.find((s) => s.name === 'execute_tool find_patients' && attr(s, 'gen_ai.tool.call.id') === callId);
      expect(tool, 'tool span').toBeDefined();
      expect(attr(tool!, 'gen_ai.operation.name')).toBe('execute_tool');
      expect(attr(tool!, 'gen_ai.tool.name')).toBe('find_patients');

      const step = byId.get(tool!.parentSpanId!)!;
      expect(step.name).toBe('chat upstream-model');
      expect(step.kind).toBe(3); // CLIENT
      expect(attr(step, 'gen_ai.operation.name')).toBe('chat');
      expect(attr(step, 'gen_ai.request.model')).toBe('upstream-model');
      expect(attr(step, 'gen_ai.provider.name')).toBe('vllm');
      expect(attr(step, 'gen_ai.response.finish_reasons')).toEqual(['tool_calls']);
      expect(attr(step, 'gen_ai.usage.input_tokens')).toBe(100);
      expect(attr(step, 'gen_ai.usage.output_tokens')).toBe(10);

      const request = byId.get(step.parentSpanId!)!;
      expect(request.name).toBe('POST /v1/chat/completions');
      expect(request.kind).toBe(2); // SERVER
      expect(request.parentSpanId ?? '').toBe('');
      expect(attr(request, 'http.route')).toBe('/v1/chat/completions');
      expect(attr(request, 'http.response.status_code')).toBe(200);

      // The second step (the answer) is the request's child too, after the tool ran.
      const steps = spans.filter((s) => s.parentSpanId === request.spanId && s.name.startsWith('chat '));
      expect(steps.map((s) => attr(s, 'gen_ai.response.finish_reasons'))).toEqual([['tool_calls'], ['stop']]);
      expect(attr(steps[1]!, 'gen_ai.usage.input_tokens')).toBe(150);

      const fhir = spans.filter((s) => s.parentSpanId === tool!.spanId);
      expect(fhir.length).toBeGreaterThan(0);
      expect(fhir[0]!.name).toBe('fhir GET Patient');
      expect(attr(fhir[0]!, 'http.request.method')).toBe('GET');
      expect(attr(fhir[0]!, 'http.response.status_code')).toBe(200);
      expect(attr(fhir[0]!, 'fhir.resource_type')).toBe('Patient');
      expect(new Set([request, step, tool!, ...fhir].map((s) => s.traceId)).size).toBe(1);
    });
  }

  it('carries no message content, no patient data and no key', () => {
    const all = receiver.bodies.join('\n');
    for (const secret of ['Iwasaki', 'Farrah', '1981-10-21', 'conditions', 'look her up', 'Found her', patientId, gw.apiKey]) {
      expect(all).not.toContain(secret);
    }
  });
});

describe('without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('creates no tracer (nothing is instrumented for traces), and METRICS=false leaves nothing at all', async () => {
    const t = await createTelemetry({ METRICS: false, OTEL_EXPORTER_OTLP_ENDPOINT: undefined, OTEL_SERVICE_NAME: 'x' });
    expect(t).toEqual({ metrics: undefined, tracing: undefined, tracer: undefined });
  });
});
