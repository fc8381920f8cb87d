// The gateway mounted in a host's Fastify app (fhirAgentGateway) and behind a plain Node server (createGateway), over
// real HTTP on loopback with a scripted model: every route answers under the prefix, FHIR links and Locations carry
// it, the host's own routes and body parsing are untouched, and a tool added by the host runs in the chat loop.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createGateway, fhirAgentGateway } from '../src/index.ts';
import { defineTool } from '../src/tools/index.ts';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.ts';
import { completionReply } from './support/upstream-replies.ts';

const shout = defineTool({
  name: 'shout',
  description: 'Upper-cases a word (a host tool).',
  inputSchema: z.object({ word: z.string().min(1).max(20) }),
  outputSchema: z.object({ loud: z.string() }),
  write: false,
  execute: async ({ word }) => ({ ok: true, content: { loud: word.toUpperCase() } }),
});

let model: FakeUpstream;
let host: FastifyInstance;
let base: string;
const logged: string[] = [];

beforeAll(async () => {
  model = await startFakeUpstream();
  host = Fastify({ logger: { level: 'info', stream: { write: (line: string) => void logged.push(line) } } });
  host.post('/host/echo', async (req) => ({ host: true, body: req.body }));
  await host.register(fhirAgentGateway, {
    prefix: '/agent',
    env: { UPSTREAM_BASE_URL: model.baseUrl, UPSTREAM_MODEL: 'm', UPSTREAM_FLAVOUR: 'vllm', FHIR_WRITE_TOOLS: 'true' },
    tools: [shout],
  });
  base = await host.listen({ port: 0, host: '127.0.0.1' });
}, 60_000);
afterAll(async () => {
  await host?.close();
  await model?.close();
});

describe('fhirAgentGateway in a host Fastify app', () => {
  it('serves health, readiness and the FHIR server under the prefix, with the prefix in links and Locations', async () => {
    expect(await fetch(`${base}/agent/health`).then((r) => r.json())).toMatchObject({ status: 'ok' });
    expect((await fetch(`${base}/agent/ready`)).status).toBeLessThan(600);
    const metadata = await fetch(`${base}/agent/fhir/metadata`).then((r) => r.json());
    expect(metadata.resourceType).toBe('CapabilityStatement');
    const page = await fetch(`${base}/agent/fhir/Patient?_count=1`).then((r) => r.json());
    expect(page.total).toBe(120);
    const next = page.link.find((l: { relation: string }) => l.relation === 'next').url as string;
    expect(next.startsWith(`${base}/agent/fhir/Patient?`)).toBe(true);
    expect((await fetch(next).then((r) => r.json())).entry[0].resource.id).not.toBe(page.entry[0].resource.id);
    const created = await fetch(`${base}/agent/fhir/Patient`, {
      method: 'POST',
      headers: { 'content-type': 'application/fhir+json' },
      body: JSON.stringify({ resourceType: 'Patient', name: [{ family: 'Mounted' }] }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toMatch(new RegExp(`^${base}/agent/fhir/Patient/[^/]+`));
    // The gateway's own 404 envelope inside the prefix; nothing at the old root.
    expect((await fetch(`${base}/fhir/metadata`)).status).toBe(404);
  });

  it("keeps the host's own route and body parsing", async () => {
    const r = await fetch(`${base}/host/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(await r.json()).toEqual({ host: true, body: { a: 1 } });
  });

  it('runs chat under the prefix, the host tool in the loop, and logs through the host logger', async () => {
    model.enqueue(
      completionReply({ toolCalls: [{ name: 'shout', arguments: '{"word":"hi"}' }] }),
      completionReply({ content: 'It said HI.' }),
    );
    const r = await fetch(`${base}/agent/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fhir-agent/clinical-reasoner', messages: [{ role: 'user', content: 'shout hi' }] }),
    });
    const body = await r.json();
    expect(r.status, JSON.stringify(body)).toBe(200);
    expect(body.choices[0].message.content).toBe('It said HI.');
    const offered = model.requests.at(-2)!.body.tools.map((t: { function: { name: string } }) => t.function.name);
    expect(offered).toContain('shout');
    expect(offered).toContain('find_patients');
    const toolMessage = model.requests.at(-1)!.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(JSON.parse(toolMessage.content)).toEqual({ ok: true, content: { loud: 'HI' } });
    expect(logged.some((l) => l.includes('"tools added"'))).toBe(true);
  });

  it('answers MCP under the prefix, with the host tool listed and called', async () => {
    const client = new Client({ name: 'plugin-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/agent/mcp`)));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('shout');
      const result = await client.callTool({ name: 'shout', arguments: { word: 'mcp' } });
      expect(result.structuredContent).toEqual({ loud: 'MCP' });
    } finally {
      await client.close();
    }
  });
});

describe('createGateway for other hosts', () => {
  it('serves a plain node:http server through its handler, under its prefix', async () => {
    const gateway = await createGateway({ env: { FHIR_SEED: 'false' }, prefix: '/gw' });
    const server = createServer((req, res) => {
      if (req.url?.startsWith('/gw/')) return gateway.handler(req, res);
      res.end('host');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect(await fetch(`${url}/gw/health`).then((r) => r.json())).toMatchObject({ status: 'ok' });
      expect(await fetch(`${url}/gw/fhir/metadata`).then((r) => r.json())).toMatchObject({ resourceType: 'CapabilityStatement' });
      expect(await fetch(`${url}/other`).then((r) => r.text())).toBe('host');
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await gateway.close();
    }
  });

  it('refuses a tool whose name is taken, naming it', async () => {
    await expect(createGateway({ env: { FHIR_SEED: 'false' }, tools: [{ ...shout, name: 'find_patients' }] })).rejects.toThrow(
      'tool "find_patients" is already defined (a built-in tool)',
    );
  });
});
