// Issue 13, opt-in (LIVE_SCHEMATHESIS=1): schemathesis, from PyPI, generates requests from the gateway's own
// GET /openapi.json (valid and invalid ones, every operation) against a live gateway: the real app with the tool loop
// and the embedded FHIR server, in front of the fake upstream answering every chat request. The claim: no 5xx, ever.
// The other checks (schema conformance of every answer, status codes, negative data rejected) are reported.
// SCHEMATHESIS_MAX_EXAMPLES (default 200) sets the examples per operation. Minutes on a shared 2-core machine.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stepReply, wireUsage } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { ensureSchemathesis } from './schemathesis/ensure-schemathesis.ts';

const LIVE = process.env.LIVE_SCHEMATHESIS === '1';
const MAX_EXAMPLES = process.env.SCHEMATHESIS_MAX_EXAMPLES ?? '200';
const SLOW = 3_600_000;

const skip: string | null = LIVE ? null : 'set LIVE_SCHEMATHESIS=1 to run (needs python3, PyPI for the first venv, and minutes of CPU)';
let gw: RunningGateway | undefined;
let st = '';
let dir = '';

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runSt(args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    // cwd: the temp dir, where schemathesis keeps its .schemathesis/ state, not the work tree.
    execFile(
      st,
      args,
      { cwd: dir, timeout: SLOW, maxBuffer: 256 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  if (skip) {
    process.stderr.write(`[schemathesis-live] skipped: ${skip}\n`);
    return;
  }
  st = await ensureSchemathesis();
  dir = await mkdtemp(path.join(os.tmpdir(), 'schemathesis-'));
  gw = await startGateway({
    env: { SERVER_TOOLS: 'true', FHIR_SEED: 'true', RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn', UPSTREAM_MAX_RETRIES: '0' },
    // Every chat request gets an answer in the format it asked for, so only the gateway can be the cause of a 5xx.
    // JSON as content: a valid answer to json_object and json_schema requests as well as to plain ones.
    handler: (req) => stepReply({ content: '{"answer":"ok"}', usage: wireUsage(12, 3) }, req.body?.stream === true),
  });
}, SLOW);

afterAll(async () => {
  await gw?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('schemathesis against GET /openapi.json of a live gateway', () => {
  it('finds no server error (5xx) in any operation', { timeout: SLOW }, async (ctx) => {
    if (skip) return ctx.skip();
    const junit = path.join(dir, 'junit.xml');
    const out = await runSt([
      'run',
      `${gw!.baseUrl}/openapi.json`,
      '--checks',
      'all',
      '--max-examples',
      MAX_EXAMPLES,
      '--seed',
      '13',
      '--workers',
      '2',
      '--header',
      `Authorization: Bearer ${gw!.apiKey}`,
      '--request-timeout',
      '30',
      '--report',
      'junit',
      '--report-junit-path',
      junit,
      '--continue-on-failure',
      '--suppress-health-check',
      'all',
    ]);
    const text = `${out.stdout}\n${out.stderr}`;
    process.stderr.write(`[schemathesis-live] exit ${out.code}\n${text.slice(-12_000)}\n`);
    const report = await readFile(junit, 'utf8').catch(() => '');
    // The summary lines are the figures docs/testing.md quotes; the claim is that none of them is a server error.
    expect(text).toMatch(/test cases generated|Test cases/i);
    expect(text).not.toMatch(/Server error/);
    expect(report).not.toMatch(/Server error/);
  });
});
