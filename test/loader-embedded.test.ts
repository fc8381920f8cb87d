// The loader over real HTTP against the embedded FHIR server on a loopback port, through the Medplum client.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Resource } from '@medplum/fhirtypes';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSyntheticEhrBundles } from '../fixtures/synthetic-ehr.ts';
import { createEmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';
import { embeddedFhirPlugin } from '../src/fhir/server/embedded-fhir-plugin.ts';
import type { FhirClient } from '../src/fhir/client/fhir-client.ts';
import { loadFhirFiles } from '../src/fhir/loader/load-fhir-files.ts';
import { runLoaderCli } from '../src/fhir/loader/run-loader-cli.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { describeError } from '../src/fhir/loader/send-chunk.ts';
import { freePort } from './support/free-port.ts';
import { startGateway, TEST_KEY } from './support/gateway-harness.ts';
import { countByType, describeLoaderContract } from './support/loader-contract.ts';
import { buildSyntheaSample, writeSyntheaSample } from './support/synthea-sample.ts';

interface Running {
  app: FastifyInstance;
  baseUrl: string;
  client: FhirClient;
}

/** A fresh, empty embedded server behind a tiny fastify app on 127.0.0.1:0. */
async function startEmbedded(): Promise<Running> {
  const server = await createEmbeddedFhirServer();
  const app = Fastify();
  await app.register(embeddedFhirPlugin, { server, prefix: '/fhir' });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = `${address}/fhir`;
  return { app, baseUrl, client: createMedplumFhirClient({ baseUrl, timeoutMs: 30_000, retries: 0 }) };
}

describeLoaderContract('embedded', async () => {
  const running = await startEmbedded();
  return { client: running.client, close: () => running.app.close() };
});

describe('loader: committed synthetic EHR on the embedded server', () => {
  let running: Running;
  beforeAll(async () => {
    running = await startEmbedded();
  });
  afterAll(async () => {
    await running?.app.close();
  });

  it('loads fixtures/synthetic-ehr and the server holds exactly the bundles’ resources', async () => {
    const expected: Record<string, Set<string>> = {};
    let entries = 0;
    for (const bundle of await loadSyntheticEhrBundles()) {
      for (const entry of bundle.entry ?? []) {
        const resource = entry.resource as Resource;
        entries++;
        (expected[resource.resourceType] ??= new Set()).add(resource.id ?? entry.fullUrl ?? String(entries));
      }
    }
    const report = await loadFhirFiles({ client: running.client, files: ['fixtures/synthetic-ehr'], concurrency: 4 });
    expect(report.errors.slice(0, 5)).toEqual([]);
    expect(report.entries).toBe(entries);
    const expectedCounts = Object.fromEntries(Object.entries(expected).map(([t, ids]) => [t, ids.size]));
    expect(await countByType(running.client, Object.keys(expectedCounts))).toEqual(expectedCounts);
    const [patient] = (await running.client.searchResources('Patient', {}, { maxResults: 1 })).resources;
    expect(expected.Patient.has(patient.id!), 'source ids are kept').toBe(true);
  });
});

describe('loader CLI', () => {
  let running: Running;
  let dir = '';
  let fhirDir = '';
  beforeAll(async () => {
    running = await startEmbedded();
    dir = await mkdtemp(join(tmpdir(), 'loader-cli-'));
    ({ fhirDir } = await writeSyntheaSample(dir, buildSyntheaSample({ seed: 'cli', patients: 1, observationsPerPatient: 2 })));
  });
  afterAll(async () => {
    await running?.app.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const capture = () => {
    const out: string[] = [];
    return { out, stream: { isTTY: false, write: (s: string) => out.push(s) } };
  };

  it('prints help, and exits 2 on bad usage', async () => {
    const stdout = capture();
    const stderr = capture();
    const deps = { env: {}, stdout: stdout.stream, stderr: stderr.stream, createClient: () => running.client };
    expect(await runLoaderCli(['--help'], deps)).toBe(0);
    expect(stdout.out.join('')).toMatch(/Usage: fhir-agent-gateway load \[options\]/);
    expect(await runLoaderCli(['--concurrency', 'lots', 'x'], deps)).toBe(2);
    expect(stderr.out.join('')).toMatch(/error: .*concurrency/s);
  });

  it('loads, prints a summary, and exits 1 with per-entry errors', async () => {
    const stdout = capture();
    const stderr = capture();
    const deps = {
      env: { FHIR_BASE_URL: running.baseUrl },
      stdout: stdout.stream,
      stderr: stderr.stream,
      createClient: () => running.client,
    };
    expect(await runLoaderCli([fhirDir], deps)).toBe(0);
    expect(stdout.out.join('')).toMatch(
      new RegExp(`Loaded 3 file\\(s\\) into ${running.baseUrl} in [\\d.]+s: 9 entries, .* 0 error\\(s\\)`),
    );
    expect(stderr.out.join('')).toMatch(/9\/9 entries, files 3\/3/);
    expect(await runLoaderCli([fhirDir, join(dir, 'nope.json')], deps)).toBe(1);
    expect(stderr.out.join('')).toMatch(/error: .*nope\.json: cannot read/);
  });

  it('checks the server first: one line when nothing answers, and never an HTTP status it did not receive', async () => {
    const stdout = capture();
    const stderr = capture();
    const baseUrl = `http://127.0.0.1:${await freePort()}/fhir`;
    const deps = { env: { FHIR_BASE_URL: baseUrl }, stdout: stdout.stream, stderr: stderr.stream, createClient: () => running.client };
    expect(await runLoaderCli(['--no-progress', fhirDir], deps)).toBe(1);
    expect(stderr.out.join('')).toBe(
      `error: no FHIR server reachable at ${baseUrl} (connection refused (ECONNREFUSED)): start one (fhir-agent-gateway serve serves one at http://127.0.0.1:8080/fhir) or pass --fhir-base-url\n`,
    );
    expect(stdout.out).toEqual([]);
    // A write that gets no answer says so, not "HTTP 502".
    const gone = createMedplumFhirClient({ baseUrl, retries: 0 });
    let error: unknown;
    await gone.createResource({ resourceType: 'Patient' }).catch((e: unknown) => (error = e));
    expect(describeError(error)).toMatch(/^FHIR server unreachable: .*ECONNREFUSED/);
  });

  it("checks the server first: one line naming FHIR_WRITE_TOOLS when the gateway's FHIR server is read-only", async () => {
    const gateway = await startGateway({ noUpstream: true, env: { FHIR_WRITE_TOOLS: 'false' } });
    try {
      const stdout = capture();
      const stderr = capture();
      const baseUrl = `${gateway.baseUrl}/fhir`;
      const deps = { env: {}, stdout: stdout.stream, stderr: stderr.stream, createClient: () => running.client };
      const args = ['--fhir-base-url', baseUrl, '--header', `Authorization: Bearer ${TEST_KEY}`, '--no-progress', fhirDir];
      expect(await runLoaderCli(args, deps)).toBe(1);
      const lines = stderr.out.join('').split('\n').filter(Boolean);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^error: ${baseUrl} is read-only for this caller \\(HTTP 403: .*no scope for update on Patient.*\\): start the gateway with FHIR_WRITE_TOOLS=true`,
        ),
      );
      // The check wrote nothing.
      expect(
        (await fetch(`${baseUrl}/Patient/fhir-agent-gateway-write-check`, { headers: { authorization: `Bearer ${TEST_KEY}` } })).status,
      ).toBe(404);
    } finally {
      await gateway.close();
    }
  });

  it('runs as `tsx src/fhir/loader/loader-cli.ts` against a real URL', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/fhir/loader/loader-cli.ts', '--fhir-base-url', running.baseUrl, '--no-progress', fhirDir],
      {
        env: { ...process.env, FHIR_BASE_URL: '' },
      },
    );
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stdout).toMatch(/9 entries, \d+ created, \d+ updated/);
    expect(code).toBe(0);
  });
});
