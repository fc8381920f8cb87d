// The MCP server over stdio (issue 13), started the two documented ways (`npm run -s mcp` and
// `npx fhir-agent-gateway mcp`) as a child process by the official SDK's StdioClientTransport: it serves the same
// tools from the embedded server seeded with the synthetic EHR (or from FHIR_BASE_URL), stdout carries nothing but MCP messages, write
// tools appear only with FHIR_WRITE_TOOLS=true, calls are audited under the key id `stdio`, and it exits when the
// client closes stdin.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AuditEvent } from '@medplum/fhirtypes';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { toolRegistry, tools } from '../src/tools/index.ts';
import { startGateway, TEST_KEY } from './support/gateway-harness.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const READ_TOOLS = [...toolRegistry.values()].filter((t) => !t.write).map((t) => t.name);
const ALL_TOOLS = [...toolRegistry.keys()];
// Spawning tsx and seeding 8k resources takes a few seconds, much longer on a loaded 2-core machine.
const SLOW = { timeout: 180_000 };

interface StdioSession {
  client: Client;
  /** Whatever the client could not read as MCP (a stray line on stdout would land here). */
  clientErrors: Error[];
  stderr: () => string;
  close(): Promise<void>;
}

async function startStdio(command: string, args: string[], env: Record<string, string> = {}): Promise<StdioSession> {
  const transport = new StdioClientTransport({ command, args, cwd: REPO, env: { LOG_LEVEL: 'info', ...env }, stderr: 'pipe' });
  let stderr = '';
  transport.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'mcp-stdio-test', version: '1.0.0' });
  const clientErrors: Error[] = [];
  client.onerror = (err) => clientErrors.push(err);
  try {
    await client.connect(transport, { timeout: SLOW.timeout });
  } catch (err) {
    throw new Error(`${command} ${args.join(' ')} did not start: ${(err as Error).message}\n${stderr}`, { cause: err });
  }
  return { client, clientErrors, stderr: () => stderr, close: () => client.close() };
}

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }, undefined, { timeout: SLOW.timeout }) as Promise<CallToolResult>;
const resultOf = (r: CallToolResult) => JSON.parse((r.content[0] as { text: string }).text);

describe('npm run -s mcp', () => {
  it(
    'lists the read tools, searches the embedded synthetic EHR, and answers bad arguments with a JSON-RPC error (-32602)',
    SLOW,
    async () => {
      const s = await startStdio('npm', ['run', '-s', 'mcp']);
      try {
        const { tools: listed } = await s.client.listTools();
        expect(listed.map((t) => t.name)).toEqual(READ_TOOLS);
        for (const t of listed) expect(t.inputSchema).toEqual(tools.find((d) => d.function.name === t.name)!.function.parameters);

        const found = await call(s.client, 'find_patients', { family: 'Iwasaki', birthdate: '1981-10-21' });
        expect(found.isError).toBe(false);
        expect(resultOf(found).content.results).toEqual([expect.objectContaining({ id: 'S1000002', name: 'Farrah N Iwasaki' })]);

        const bad = await call(s.client, 'search_observations', { patient: 'S1000002', date_from: 'soon' }).catch((e: unknown) => e);
        expect(bad).toBeInstanceOf(McpError);
        expect((bad as McpError).code).toBe(ErrorCode.InvalidParams);
        expect((bad as McpError).data).toEqual([expect.objectContaining({ path: 'date_from' })]);
        // Writes are off by default: the write tools are neither listed nor run.
        const write = await call(s.client, 'record_observation', { patient: 'S1000002', code: { code: 'x' }, value_string: 'y' });
        expect(resultOf(write).error.code).toBe('writes_disabled');
      } finally {
        await s.close();
      }
      expect(s.clientErrors).toEqual([]);
      // Logs went to stderr, as pino JSON; the process shut down when the client closed its stdin.
      expect(s.stderr()).toMatch(/"msg":"MCP stdio server ready"/);
      expect(s.stderr()).toMatch(/"why":"stdin closed"/);
    },
  );
});

describe('npx fhir-agent-gateway mcp', () => {
  it('with FHIR_WRITE_TOOLS=true lists and runs the write tools, and audits every call under the key id "stdio"', SLOW, async () => {
    const auditFile = join(mkdtempSync(join(tmpdir(), 'mcp-stdio-')), 'audit.ndjson');
    const s = await startStdio('npx', ['fhir-agent-gateway', 'mcp'], {
      FHIR_WRITE_TOOLS: 'true',
      AUDIT_SINK: 'file',
      AUDIT_FILE: auditFile,
    });
    try {
      const { tools: listed } = await s.client.listTools();
      expect(listed.map((t) => t.name)).toEqual(ALL_TOOLS);

      const conditions = await call(s.client, 'search_conditions', { patient: 'S1000002' });
      expect(conditions.isError).toBe(false);
      const written = await call(s.client, 'record_observation', {
        patient: 'S1000002',
        code: { system: 'http://loinc.org', code: '8867-4', display: 'Heart rate' },
        value_quantity: { value: 70, unit: '/min' },
      });
      expect(resultOf(written)).toMatchObject({ ok: true, written: [{ resourceType: 'Observation', created: true }] });
    } finally {
      await s.close();
    }
    expect(s.clientErrors).toEqual([]);
    const events = readFileSync(auditFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditEvent);
    const byTool = (tool: string) => events.filter((e) => e.agent[1]?.who?.display === `fhir-agent-gateway tool ${tool}`);
    expect(byTool('search_conditions')).toEqual([
      expect.objectContaining({
        subtype: [expect.objectContaining({ code: 'search-type' })],
        agent: [expect.objectContaining({ altId: 'stdio' }), expect.anything()],
      }),
    ]);
    expect(byTool('record_observation')).toEqual([
      expect.objectContaining({ action: 'C', outcome: '0', agent: [expect.objectContaining({ altId: 'stdio' }), expect.anything()] }),
    ]);
  });
});

describe('npm run -s mcp with FHIR_BASE_URL', () => {
  it('searches that server (here another gateway’s /fhir, with FHIR_AUTH_HEADER) and seeds nothing', SLOW, async () => {
    const fhirHost = await startGateway({ noUpstream: true, env: { FHIR_SEED: 'true' } });
    try {
      const s = await startStdio('npm', ['run', '-s', 'mcp'], {
        FHIR_BASE_URL: `${fhirHost.baseUrl}/fhir`,
        FHIR_AUTH_HEADER: `Bearer ${TEST_KEY}`,
      });
      try {
        const found = await call(s.client, 'find_patients', { family: 'Iwasaki', birthdate: '1981' });
        expect(resultOf(found).content.results).toEqual([expect.objectContaining({ id: 'S1000002' })]);
      } finally {
        await s.close();
      }
      expect(s.stderr()).toMatch(/"msg":"external FHIR server"/);
      expect(s.stderr()).not.toMatch(/embedded FHIR server seeded/);
    } finally {
      await fhirHost.close();
    }
  });
});

describe('the fhir-agent-gateway launcher (package.json "bin")', () => {
  const launcher = join(REPO, 'bin/fhir-agent-gateway.js');
  it('names its commands without one, and refuses an unknown one with exit 64', () => {
    const usage = spawnSync(process.execPath, [launcher], { encoding: 'utf8' });
    expect(usage.status).toBe(0);
    // Help is on stdout, with every command.
    for (const command of ['serve', 'mcp', 'eval', 'load', 'key']) expect(usage.stdout).toMatch(new RegExp(`^ {2}${command} +\\S`, 'm'));
    expect(usage.stdout).toMatch(/^ {2}mcp {4}the FHIR tools as an MCP server over stdio/m);
    expect(usage.stderr).toBe('');
    const unknown = spawnSync(process.execPath, [launcher, 'mcpp'], { encoding: 'utf8' });
    expect(unknown.status).toBe(64);
  });
  it('passes what follows the command to the entry point (serve --help prints the configuration)', SLOW, () => {
    const help = spawnSync(process.execPath, [launcher, 'serve', '--help'], { encoding: 'utf8', timeout: SLOW.timeout });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/FHIR_WRITE_TOOLS/);
  });
});
