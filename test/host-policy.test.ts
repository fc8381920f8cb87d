// The DNS-rebinding defence's decision (issue 19): which Host headers and Origins a keyless gateway serves, and
// which base URL links are built from, for every spelling an attacker might send.
import { connect } from 'node:net';
import fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { hostHeaders } from '../src/edge/http/host-headers.ts';
import { createHostPolicy } from '../src/edge/http/host-policy.ts';
import { parseHost } from '../src/edge/http/parse-host.ts';

const sandbox = createHostPolicy({ allowedHosts: [] });
const listed = createHostPolicy({ allowedHosts: ['gw.example.org', 'pinned.example.org:8443', '[2001:db8::7]'] });

describe('parseHost', () => {
  it('canonical host[:port] only', () => {
    expect(parseHost('LocalHost.:8080')).toEqual({ hostname: 'localhost', port: '8080', host: 'localhost:8080' });
    expect(parseHost('[0:0:0:0:0:0:0:1]:80')).toBeUndefined(); // not the compressed form a browser sends
    expect(parseHost('[::1]:80')).toEqual({ hostname: '[::1]', port: '80', host: '[::1]:80' });
    expect(parseHost('127.0.0.1')).toEqual({ hostname: '127.0.0.1', port: undefined, host: '127.0.0.1' });
  });
});

describe('parseHost remembers what it parsed (issue 30)', () => {
  it('answers the same the second time, for good and bad spellings, and past its bound', () => {
    const spellings = ['LocalHost.:8080', '[::1]:80', 'a b', '%zz', 'user@host', '127.1', 'example.org:443'];
    const first = spellings.map((h) => parseHost(h));
    // Enough other spellings to fill the memory and start it over.
    for (let i = 0; i < 600; i++) parseHost(`host-${i}.example:${1000 + i}`);
    expect(spellings.map((h) => parseHost(h))).toEqual(first);
    expect(spellings.map((h) => parseHost(h))).toEqual(first);
    expect(first.map((p) => p?.host)).toEqual([
      'localhost:8080',
      '[::1]:80',
      undefined,
      undefined,
      undefined,
      undefined,
      'example.org:443',
    ]);
    // What it hands out cannot be changed by one caller for the next.
    expect(Object.isFrozen(parseHost('example.org:443'))).toBe(true);
  });
});

describe('createHostPolicy().allows', () => {
  it.for([
    'localhost',
    'localhost:8080',
    'LOCALHOST:8080',
    'localhost.:8080',
    '127.0.0.1',
    '127.0.0.1:1',
    '127.9.8.7:8080',
    '[::1]',
    '[::1]:8080',
  ])('loopback %s is served without any list', (host) => {
    expect(sandbox.allows(host)).toBe(true);
  });

  it.for([
    ['a rebinding name', 'rebind.attacker.example:8080'],
    ['a name that resolves to loopback', '127.0.0.1.nip.io:8080'],
    ['a subdomain of localhost', 'app.localhost:8080'],
    ['a loopback prefix in a longer name', 'localhost.attacker.example'],
    ['userinfo', 'localhost@attacker.example'],
    ['userinfo the other way', 'attacker.example@localhost'],
    ['a path', 'localhost/evil'],
    ['a backslash', 'localhost\\evil'],
    ['a query', 'localhost?x'],
    ['a fragment', 'localhost#x'],
    ['an empty port', 'localhost:'],
    ['a bad port', 'localhost:99999'],
    ['two hosts in one header', 'localhost, attacker.example'],
    ['surrounding spaces', ' localhost '],
    ['a short IPv4 spelling', '127.1'],
    ['a decimal IPv4 spelling', '2130706433'],
    ['a hex IPv4 spelling', '0x7f.0.0.1'],
    ['a percent escape', '%6cocalhost'],
    ['an uncompressed IPv6 loopback', '[0:0:0:0:0:0:0:1]'],
    ['IPv6 without brackets', '::1'],
    ['IPv6 with a zone', '[fe80::1%25lo]'],
    ['two trailing dots', 'localhost..'],
    ['a lone dot', '.'],
    ['empty', ''],
    ['missing', undefined],
    ['the unspecified address', '0.0.0.0:8080'],
    ['a private address', '192.168.1.10:8080'],
  ] as const)('%s (%s) is refused', ([, host]) => {
    expect(sandbox.allows(host)).toBe(false);
  });

  it('duplicates: every Host header of the request is checked, and two are refused even when both are allowed', () => {
    expect(sandbox.allows(['localhost:8080'])).toBe(true);
    expect(sandbox.allows(['localhost:8080', 'attacker.example'])).toBe(false);
    expect(sandbox.allows(['attacker.example', 'localhost:8080'])).toBe(false);
    expect(sandbox.allows(['localhost:8080', 'localhost:8080'])).toBe(false);
    expect(sandbox.allows([])).toBe(false);
    expect(hostHeaders(['Host', 'a', 'Accept', '*/*', 'HOST', 'b', 'X-Host', 'c'])).toEqual(['a', 'b']);
  });

  it('ALLOWED_HOSTS: case-insensitive, a trailing dot ignored, any port unless the entry names one', () => {
    expect(['gw.example.org', 'GW.Example.ORG:443', 'gw.example.org.:8080'].map((h) => listed.allows(h))).toEqual([true, true, true]);
    expect(['pinned.example.org:8443', 'PINNED.example.org.:8443'].map((h) => listed.allows(h))).toEqual([true, true]);
    expect(['pinned.example.org', 'pinned.example.org:443', 'pinned.example.org:84430'].map((h) => listed.allows(h))).toEqual([
      false,
      false,
      false,
    ]);
    expect(['[2001:db8::7]:9000', '[2001:DB8:0:0:0:0:0:7]'].map((h) => listed.allows(h))).toEqual([true, false]);
    expect(['evil-gw.example.org', 'gw.example.org.evil.example', 'x.gw.example.org'].map((h) => listed.allows(h))).toEqual([
      false,
      false,
      false,
    ]);
    expect(listed.allows('localhost:8080')).toBe(true);
    expect(() => createHostPolicy({ allowedHosts: ['http://gw.example.org'] })).toThrow(/not a host/);
  });

  it("PUBLIC_BASE_URL's host is served, on any port", () => {
    const behindProxy = createHostPolicy({ allowedHosts: [], publicBaseUrl: 'https://GW.example.org/gateway' });
    expect(['gw.example.org', 'gw.example.org:8080', 'localhost'].map((h) => behindProxy.allows(h))).toEqual([true, true, true]);
    expect(behindProxy.allows('attacker.example')).toBe(false);
  });
});

describe('createHostPolicy().allowsOrigin', () => {
  it('an Origin on a served host is accepted; any other, null, or not an origin is refused', () => {
    expect(
      ['http://localhost:8080', 'http://127.0.0.1:3000', 'http://[::1]:8080', 'https://localhost'].map((o) => sandbox.allowsOrigin(o)),
    ).toEqual([true, true, true, true]);
    for (const origin of [
      'http://rebind.attacker.example:8080',
      'null',
      '',
      'http://localhost:8080/',
      'http://localhost:8080/path',
      'http://user@localhost:8080',
      'file://localhost',
      'chrome-extension://abcdef',
      'http://app.localhost:8080',
      'http://127.0.0.1.nip.io:8080',
    ]) {
      expect(sandbox.allowsOrigin(origin)).toBe(false);
    }
    expect(
      ['https://gw.example.org', 'https://pinned.example.org:8443', 'https://pinned.example.org'].map((o) => listed.allowsOrigin(o)),
    ).toEqual([true, true, false]);
  });
});

describe('createHostPolicy().baseUrl', () => {
  it('PUBLIC_BASE_URL when set, whatever the Host says', () => {
    const p = createHostPolicy({ allowedHosts: [], publicBaseUrl: 'https://gw.example.org/gateway' });
    expect(p.baseUrl('http', 'attacker.example')).toBe('https://gw.example.org/gateway');
    expect(p.baseUrl('http', undefined)).toBe('https://gw.example.org/gateway');
  });

  it('else the canonical form of an allowed Host, and nothing for any other', () => {
    expect(sandbox.baseUrl('http', 'LOCALHOST.:8080')).toBe('http://localhost:8080');
    expect(sandbox.baseUrl('https', '[::1]:8443')).toBe('https://[::1]:8443');
    expect(listed.baseUrl('https', 'GW.example.org')).toBe('https://gw.example.org');
    expect(sandbox.baseUrl('http', 'attacker.example')).toBeUndefined();
    expect(sandbox.baseUrl('http', 'localhost/evil?')).toBeUndefined();
    expect(sandbox.baseUrl('http', ['localhost', 'attacker.example'])).toBeUndefined();
  });
});

describe('wired as an onRequest hook (real server on loopback, raw requests)', () => {
  const raw = (port: number, request: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.end(request));
      let data = '';
      socket.on('data', (chunk) => (data += chunk));
      socket.on('close', () => resolve(data));
      socket.on('error', reject);
    });

  it('foreign, duplicate and missing Host headers get 403; loopback ones are served', async () => {
    const policy = createHostPolicy({ allowedHosts: [] });
    const app = fastify();
    app.addHook('onRequest', async (req, reply) => {
      if (!policy.allows(hostHeaders(req.raw.rawHeaders))) return reply.code(403).send({ error: 'host' });
    });
    app.get('/fhir/Patient/:id', async () => ({ resourceType: 'Patient' }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    const status = async (headers: string, version = '1.1') =>
      (await raw(port, `GET /fhir/Patient/S1 HTTP/${version}\r\n${headers}Connection: close\r\n\r\n`)).split('\r\n')[0];
    try {
      expect(await status(`Host: localhost:${port}\r\n`)).toBe('HTTP/1.1 200 OK');
      expect(await status(`Host: 127.0.0.1:${port}\r\n`)).toBe('HTTP/1.1 200 OK');
      expect(await status(`Host: rebind.attacker.example:${port}\r\n`)).toBe('HTTP/1.1 403 Forbidden');
      // Node keeps the first of two Host headers in req.headers.host; the raw list sees both.
      expect(await status(`Host: localhost:${port}\r\nHost: rebind.attacker.example\r\n`)).toBe('HTTP/1.1 403 Forbidden');
      expect(await status('', '1.0')).toBe('HTTP/1.1 403 Forbidden');
    } finally {
      await app.close();
    }
  });
});
