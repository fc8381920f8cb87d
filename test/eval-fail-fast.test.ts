// The eval CLI fails fast and clearly: an unreachable --base-url names the host and the cause before the first
// sample, --timeout bounds one model call (and a timed-out call is not retried), --max-retries bounds retries,
// and a harness error is one line with the documented exit code, without a stack trace.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvalLog } from '../evals/eval-log.ts';
import { freePort as closedPort } from './support/free-port.ts';
import { runEvalCli } from './support/run-eval-cli.ts';

let dir: string;

/** An OpenAI-compatible endpoint that lists models but misbehaves on chat: hangs, or answers 500. */
async function misbehavingUpstream(
  chat: 'hang' | 'fail',
): Promise<{ url: string; chatRequests: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server: Server = createServer((req, res) => {
    if (req.url?.endsWith('/models')) {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model', owned_by: 'test' }] }));
      return;
    }
    count++;
    if (chat === 'fail') {
      res.statusCode = 500;
      res.end(JSON.stringify({ error: { message: 'boom', type: 'server_error' } }));
    }
    // 'hang': never answer; the client's --timeout must end the call.
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    chatRequests: () => count,
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

const model = (baseUrl: string, extra: string[] = []) => [
  'run',
  'builtin',
  '--solver',
  'model',
  '--model',
  'm',
  '--base-url',
  baseUrl,
  '--quiet',
  ...extra,
];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'eval-fail-fast-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('eval CLI: failing fast and clearly', () => {
  it('a refused --base-url: one line naming the host and ECONNREFUSED, exit 2, no log, no stack', async () => {
    const port = await closedPort();
    const log = path.join(dir, 'refused.jsonl');
    const r = await runEvalCli(model(`http://127.0.0.1:${port}/v1`, ['--log', log]));
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(`eval: --base-url 127.0.0.1:${port}: connection refused (ECONNREFUSED)`);
    expect(r.stdout).toBe('');
    await expect(readEvalLog(log)).rejects.toThrow(/ENOENT/);
  });

  it('an unknown host: the DNS failure is named', async () => {
    const r = await runEvalCli(model('http://no-such-host.invalid/v1'));
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/^eval: --base-url no-such-host\.invalid: DNS lookup failed \((ENOTFOUND|EAI_AGAIN)\)$/);
  });

  it('TLS spoken to a plain-HTTP port: the TLS failure is named', async () => {
    const up = await misbehavingUpstream('fail');
    try {
      const r = await runEvalCli(model(up.url.replace('http:', 'https:')));
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toMatch(/^eval: --base-url 127\.0\.0\.1:\d+: TLS failed \(\w+\)$/);
    } finally {
      await up.close();
    }
  });

  it('an unreachable --fhir-base-url and --judge-base-url are checked the same way', async () => {
    const port = await closedPort();
    const fhir = await runEvalCli([
      'run',
      'builtin',
      '--solver',
      'reference',
      '--fhir-base-url',
      `http://127.0.0.1:${port}/fhir`,
      '--quiet',
    ]);
    expect(fhir.stderr.trim()).toBe(`eval: --fhir-base-url 127.0.0.1:${port}: connection refused (ECONNREFUSED)`);
    const judge = await runEvalCli([
      'run',
      'builtin',
      '--solver',
      'reference',
      '--judge-base-url',
      `http://127.0.0.1:${port}/v1`,
      '--judge-model',
      'j',
      '--quiet',
    ]);
    expect(judge.stderr.trim()).toBe(`eval: --judge-base-url 127.0.0.1:${port}: connection refused (ECONNREFUSED)`);
  });

  it('--timeout ends a call the endpoint never answers, and a timed-out call is not retried', async () => {
    const up = await misbehavingUpstream('hang');
    try {
      const log = path.join(dir, 'hang.jsonl');
      const r = await runEvalCli(
        model(up.url, ['--timeout', '1', '--max-retries', '3', '--limit', '2', '--concurrency', '2', '--log', log]),
      );
      expect(r.code).toBe(2);
      const { samples } = await readEvalLog(log);
      expect(samples).toHaveLength(2);
      for (const s of samples) expect(s.error).toContain('no answer within 1 s (--timeout)');
      expect(up.chatRequests()).toBe(2);
      expect(r.stdout).toMatch(/^harness errors: 2 \(e\.g\. no answer within 1 s \(--timeout\)\)$/m);
    } finally {
      await up.close();
    }
  });

  it('--max-retries bounds the retries of a failing call (0 → one request, 2 → three)', async () => {
    for (const [retries, expected] of [
      [0, 1],
      [2, 3],
    ] as const) {
      const up = await misbehavingUpstream('fail');
      try {
        const r = await runEvalCli(
          model(up.url, ['--max-retries', String(retries), '--limit', '1', '--log', path.join(dir, `r${retries}.jsonl`)]),
        );
        expect(r.code).toBe(2);
        expect(up.chatRequests()).toBe(expected);
      } finally {
        await up.close();
      }
    }
  });

  it('a harness error is one line with exit 2, without a stack trace', async () => {
    // A log path under a regular file cannot be created (ENOTDIR): a harness error, not a usage error.
    const file = path.join(dir, 'a-file');
    await writeFile(file, '');
    const r = await runEvalCli(['run', 'builtin', '--solver', 'reference', '--quiet', '--log', path.join(file, 'run.jsonl')]);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^eval: harness error: /);
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });
});
