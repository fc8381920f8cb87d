// Image URLs that would send a model server to this machine or a private network are refused (issue 19), in every
// spelling the WHATWG URL parser accepts; public https URLs and data URIs still pass.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from './api-error.ts';
import { validateImageUrl } from './validate-image-url.ts';
import { isInternalHost } from '../../shared/is-internal-host.ts';

const PARAM = 'messages[0].content[0].image_url.url';
const refusal = (url: string): ApiError | undefined => {
  try {
    validateImageUrl(url, PARAM, 1_000_000);
    return undefined;
  } catch (e) {
    return e as ApiError;
  }
};

/** Every IPv4 spelling the URL parser normalises: 1 to 4 parts, each in decimal, hex or octal. */
const spellIpv4 = (n: number, parts: 1 | 2 | 3 | 4, radixes: number[]): string => {
  const bytes = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  const values =
    parts === 4 ? bytes : parts === 3 ? [bytes[0]!, bytes[1]!, n & 0xffff] : parts === 2 ? [bytes[0]!, n & 0xffffff] : [n >>> 0];
  return values
    .map((v, i) => {
      const radix = radixes[i % radixes.length]!;
      return radix === 16 ? `0x${v.toString(16)}` : radix === 8 ? `0${v.toString(8)}` : String(v);
    })
    .join('.');
};
const ipv4 = (a: number, b: number, c: number, d: number) => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;

describe('validateImageUrl: internal hosts and credentials', () => {
  it.for([
    'https://127.0.0.1/x.png',
    'https://2130706433/x.png',
    'https://0x7f.1/x.png',
    'https://0177.0.0.1/x.png',
    'https://127.1/x.png',
    'https://0x7f000001/x.png',
    'https://%31%32%37.0.0.1/x.png',
    'https://１２７.0.0.1/x.png',
    'https://localhost/x.png',
    'https://LOCALHOST./x.png',
    'https://images.localhost/x.png',
    'https://169.254.169.254/latest/meta-data/',
    'https://10.1.2.3/x.png',
    'https://172.16.0.1/x.png',
    'https://172.31.255.255/x.png',
    'https://192.168.1.1/x.png',
    'https://100.64.0.1/x.png',
    'https://0.0.0.0/x.png',
    'https://0/x.png',
    'https://[::1]/x.png',
    'https://[0:0:0:0:0:0:0:1]/x.png',
    'https://[::]/x.png',
    'https://[fe80::1]/x.png',
    'https://[febf::1]/x.png',
    'https://[fc00::1]/x.png',
    'https://[fd12:3456::1]/x.png',
    'https://[::ffff:127.0.0.1]/x.png',
    'https://[::ffff:7f00:1]/x.png',
    'https://[::ffff:169.254.169.254]/x.png',
    'https://[::ffff:10.0.0.1]/x.png',
    'https://[::127.0.0.1]/x.png',
    'https://[64:ff9b::a9fe:a9fe]/x.png',
    'https://[2002:7f00:1::]/x.png',
    'https://user:pass@images.example.org/x.png',
    'https://user@images.example.org/x.png',
    'https://:secret@images.example.org/x.png',
  ])('refuses %s with invalid_image_url', (url) => {
    const err = refusal(url);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_image_url', param: PARAM });
  });

  it.for([
    'https://images.example.org/x.png',
    'https://8.8.8.8/x.png',
    'https://172.32.0.1/x.png', // just past 172.16/12
    'https://100.128.0.1/x.png', // just past 100.64/10
    'https://169.255.0.1/x.png',
    'https://[2606:4700::1111]/x.png',
    'https://[::ffff:8.8.8.8]/x.png',
    'https://[fec0::1]/x.png', // past fe80::/10
    'https://localhost.example.org/x.png',
    // A name, not a literal: resolving it is the fetcher's business (no DNS here).
    'https://127.0.0.1.nip.io/x.png',
    'data:image/png;base64,iVBORw0KGgo=',
  ])('accepts %s', (url) => {
    expect(refusal(url)).toBeUndefined();
  });

  it('any spelling of an internal IPv4 address is refused; the same spellings of a public one pass', () => {
    const internal = fc.oneof(
      fc.integer({ min: 0, max: 255 }).chain((b) => fc.tuple(fc.constant(127), fc.constant(b), fc.nat(255), fc.nat(255))),
      fc.tuple(fc.constant(10), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(192), fc.constant(168), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(169), fc.constant(254), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(100), fc.integer({ min: 64, max: 127 }), fc.nat(255), fc.nat(255)),
    );
    const spelling = fc.tuple(
      fc.constantFrom<1 | 2 | 3 | 4>(1, 2, 3, 4),
      fc.array(fc.constantFrom(8, 10, 16), { minLength: 4, maxLength: 4 }),
    );
    fc.assert(
      fc.property(internal, spelling, fc.boolean(), ([a, b, c, d], [parts, radixes], mapped) => {
        const host = spellIpv4(ipv4(a, b, c, d), parts, radixes);
        const url = mapped ? `https://[::ffff:${a}.${b}.${c}.${d}]/x.png` : `https://${host}:8443/x.png`;
        expect(refusal(url)?.code).toBe('invalid_image_url');
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.constantFrom([8, 8, 8, 8], [93, 184, 216, 34], [1, 1, 1, 1]), spelling, (address, [parts, radixes]) => {
        const [a, b, c, d] = address as [number, number, number, number];
        expect(refusal(`https://${spellIpv4(ipv4(a, b, c, d), parts, radixes)}/x.png`)).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });

  it('isInternalHost takes the hostname as new URL() leaves it, bracketed IPv6 included', () => {
    expect(['127.0.0.1', '[::1]', '::1', 'localhost.', 'a.b.localhost', '[::ffff:a9fe:a9fe]'].map(isInternalHost)).toEqual(
      Array(6).fill(true),
    );
    expect(['example.org', '8.8.8.8', '[2001:db8::1]', 'localhostx', ''].map(isInternalHost)).toEqual(Array(5).fill(false));
  });
});
