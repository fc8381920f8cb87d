// Boot-time configuration: zod-validated, one clear line per bad variable, --help and docs/configuration.md list
// everything, auth-off rules.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARS, loadConfig } from '../src/composition/config.ts';

describe('loadConfig', () => {
  it('defaults give a loopback service with auth off and no upstream', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ HOST: '127.0.0.1', PORT: 8080, authEnabled: false, RATE_LIMIT_PER_MINUTE: 600 });
    expect(c.UPSTREAM_BASE_URL).toBeUndefined();
  });
  it.each([
    [{ PORT: 'eighty' }, /^invalid PORT="eighty"/],
    [{ UPSTREAM_BASE_URL: 'http://127.0.0.1:8000' }, /^invalid UPSTREAM_BASE_URL=.*must end in \/v1/],
    [{ UPSTREAM_BASE_URL: 'ftp://x/v1' }, /^invalid UPSTREAM_BASE_URL/],
    [{ MODEL_ID: 'no-slash' }, /^invalid MODEL_ID=.*<provider>\/<model_name>/],
    [{ RATE_LIMIT_PER_MINUTE: '-1' }, /^invalid RATE_LIMIT_PER_MINUTE/],
    [{ HOST: '0.0.0.0' }, /^invalid API_KEYS: required when HOST=0.0.0.0/],
    [{ FHIR_WRITE_TOOLS: 'maybe' }, /^invalid FHIR_WRITE_TOOLS/],
  ])('%j is rejected with one line naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
  it('never echoes secrets in errors', () => {
    expect(() => loadConfig({ FHIR_AUTH_HEADER: 'Bearer x\nInjected: y' })).toThrow(/FHIR_AUTH_HEADER=<redacted>/);
  });
  it('ALLOWED_HOSTS: a list of host[:port], trimmed; anything else (userinfo, paths, schemes, bad ports) is refused', () => {
    expect(loadConfig({ ALLOWED_HOSTS: ' gw.example.org , [::1]:8080,GW2.example.org.' }).ALLOWED_HOSTS).toEqual([
      'gw.example.org',
      '[::1]:8080',
      'GW2.example.org.',
    ]);
    expect(loadConfig({}).ALLOWED_HOSTS).toBeUndefined();
    for (const bad of [
      'http://gw.example.org',
      'user@gw.example.org',
      'gw.example.org/path',
      'gw.example.org:99999',
      'a b',
      'gw:',
      '::1',
    ]) {
      expect(() => loadConfig({ ALLOWED_HOSTS: `ok.example.org,${bad}` })).toThrow(/^invalid ALLOWED_HOSTS=.*host or host:port/);
    }
  });
  it('PUBLIC_BASE_URL: an absolute http(s) URL without trailing slash, credentials, query or fragment', () => {
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://gw.example.org' }).PUBLIC_BASE_URL).toBe('https://gw.example.org');
    expect(loadConfig({ PUBLIC_BASE_URL: 'http://127.0.0.1:8080/gateway' }).PUBLIC_BASE_URL).toBe('http://127.0.0.1:8080/gateway');
    for (const [bad, why] of [
      ['https://gw.example.org/', /trailing slash/],
      ['gw.example.org', /PUBLIC_BASE_URL/],
      ['ftp://gw.example.org', /PUBLIC_BASE_URL/],
      ['https://u:p@gw.example.org', /no credentials/],
      ['https://gw.example.org?x=1', /no credentials, query or fragment/],
      ['https://gw.example.org#top', /no credentials, query or fragment/],
    ] as const) {
      expect(() => loadConfig({ PUBLIC_BASE_URL: bad })).toThrow(why);
    }
  });
  it('API keys enable auth on any host', () => {
    expect(loadConfig({ HOST: '0.0.0.0', API_KEYS: 'a, b' })).toMatchObject({ API_KEYS: ['a', 'b'], authEnabled: true });
  });
});

describe('npm start entry point', () => {
  const run = (args: string[], env: Record<string, string>) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'src/composition/server.ts', ...args], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
      timeout: 20_000,
    });

  it('--help lists every variable', () => {
    const r = run(['--help'], {});
    expect(r.status).toBe(0);
    for (const name of Object.keys(CONFIG_VARS)) expect(r.stdout).toContain(name);
  });
  it('docs/configuration.md has one row for every variable, and none for a variable that does not exist', () => {
    const page = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
    const rows = [...page.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]);
    expect([...rows].sort()).toEqual(Object.keys(CONFIG_VARS).sort());
  });
  it('a bad value stops the service with one clear line', () => {
    const r = run([], { PORT: 'x', HOST: '127.0.0.1' });
    expect(r.status).toBe(78);
    expect(
      r.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('configuration error')),
    ).toEqual([expect.stringMatching(/^configuration error: invalid PORT="x"/)]);
  });
});
