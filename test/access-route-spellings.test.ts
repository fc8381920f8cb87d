// Issue 19, route level: authentication, the chat flag and the rate limit follow the route fastify matched, so a
// request target spelled any other way (percent-escapes of any character, `//`, `/./`, `/../`, trailing `/`,
// `;params`, `#fragments`, a query) either reaches no handler or reaches it with the same checks. The property, on
// generated spellings of every protected route: whenever the admin key's request ran a handler (2xx), the same
// target without a key is 401 and with the key that lacks `chat` is 403 on the chat route; and no spelling without
// a key is ever answered 2xx. FUZZ_RUNS raises the case count (`npm run fuzz`).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeAttackKeys } from './support/attack-keys.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { rawRequest } from './support/raw-request.ts';
import { completionReply } from './support/upstream-replies.ts';

const { file, key } = writeAttackKeys();
const runs = Number(process.env.FUZZ_RUNS ?? 2000);
const seed = Number(process.env.FUZZ_SEED ?? 19_019);

interface RouteCase {
  method: string;
  path: string;
  body?: string;
  chat?: boolean;
}
const ROUTES: RouteCase[] = [
  { method: 'GET', path: '/v1/models' },
  { method: 'GET', path: '/v1/models/acme/clinical-reasoner-1' },
  {
    method: 'POST',
    path: '/v1/chat/completions',
    chat: true,
    body: JSON.stringify({ model: 'acme/clinical-reasoner-1', messages: [{ role: 'user', content: 'hi' }] }),
  },
  { method: 'POST', path: '/mcp', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) },
  { method: 'GET', path: '/fhir/Patient/S1000002' },
  { method: 'GET', path: '/fhir/Observation?patient=S1000002&_summary=count' },
];

const hex = (c: string, upper: boolean) => {
  const h = c.charCodeAt(0).toString(16).padStart(2, '0');
  return `%${upper ? h.toUpperCase() : h}`;
};

/** A respelling of `path`: escapes of any characters, then one structural change or none. */
const spelling = (path: string) =>
  fc
    .record({
      escapes: fc.array(fc.tuple(fc.boolean(), fc.boolean()), { minLength: path.length, maxLength: path.length }),
      change: fc.constantFrom('none', 'trailing', 'double', 'dot', 'dotdot', 'param', 'fragment', 'query', 'leading'),
      at: fc.nat(),
    })
    .map(({ escapes, change, at }) => {
      const q = path.indexOf('?');
      const p = q < 0 ? path : path.slice(0, q);
      const query = q < 0 ? '' : path.slice(q);
      let out = [...p].map((c, i) => (c !== '/' && escapes[i][0] ? hex(c, escapes[i][1]) : c)).join('');
      const slashes = [...out].flatMap((c, i) => (c === '/' ? [i] : []));
      const cut = slashes[at % slashes.length];
      switch (change) {
        case 'trailing':
          out += '/';
          break;
        case 'double':
          out = `${out.slice(0, cut)}/${out.slice(cut)}`;
          break;
        case 'dot':
          out = `${out.slice(0, cut)}/.${out.slice(cut)}`;
          break;
        case 'dotdot':
          out = `${out.slice(0, cut)}/x/..${out.slice(cut)}`;
          break;
        case 'param':
          out += ';a=1';
          break;
        case 'fragment':
          return `${out}${query}#frag`;
        case 'query':
          return `${out}${query || '?'}&x=%26`;
        case 'leading':
          out = `/${out}`;
          break;
      }
      return out + query;
    });

let gw: RunningGateway;
const send = (route: RouteCase, target: string, k?: string) =>
  rawRequest(gw.baseUrl, {
    method: route.method,
    target,
    body: route.body,
    headers: {
      ...(route.body ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } : {}),
      ...(k ? { authorization: `Bearer ${k}` } : {}),
    },
  });

beforeAll(async () => {
  gw = await startGateway({
    handler: () => completionReply({ content: 'ok' }),
    env: { API_KEYS: '', API_KEYS_FILE: file, FHIR_SEED: 'true', RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn' },
  });
});
afterAll(() => gw?.close());

describe('every spelling of a protected route gets its checks', () => {
  it('the issue’s reproductions: no key, no access; no chat flag, no chat', async () => {
    const chat = ROUTES[2];
    for (const target of ['/%761/chat/completions', '/v%31/chat/completions', '/%76%31/chat/completions']) {
      expect((await send(chat, target, key.admin)).status, target).toBe(200);
      const anonymous = await send(chat, target);
      expect(anonymous.status, target).toBe(401);
      expect(JSON.parse(anonymous.text)).toMatchObject({ error: { code: 'invalid_api_key' } });
    }
    expect((await send(ROUTES[0], '/%761/models')).status).toBe(401);
    for (const target of ['/v1/chat/%63ompletions', '/v1/chat/completion%73']) {
      expect((await send(chat, target, key.admin)).status, target).toBe(200);
      const refused = await send(chat, target, key.nochat);
      expect(refused.status, target).toBe(403);
      expect(JSON.parse(refused.text)).toMatchObject({ error: { code: 'insufficient_scope' } });
    }
    // /fhir spelled otherwise: the key check first, then the target below the mount point is read by the FHIR parser.
    expect((await send(ROUTES[4], '/%66hir/Patient/S1000002')).status).toBe(401);
    expect((await send(ROUTES[4], '/%66hir/Patient/S1000002', key.sys1)).status).toBe(200);
  });

  it(`generated spellings (${runs} cases, seed ${seed}): a handler never runs without its checks`, async () => {
    const seen = { ran: 0, refusedShape: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES).chain((route) => spelling(route.path).map((target) => ({ route, target }))),
        async ({ route, target }) => {
          const anonymous = await send(route, target);
          expect(anonymous.status, `${route.method} ${target} without a key`).not.toBeLessThan(300);
          const admin = await send(route, target, key.admin);
          if (admin.status >= 300) {
            seen.refusedShape++;
            return;
          }
          seen.ran++;
          expect(anonymous.status, `${route.method} ${target} ran for admin; without a key`).toBe(401);
          if (route.chat) expect((await send(route, target, key.nochat)).status, `${target} for nochat`).toBe(403);
        },
      ),
      { numRuns: runs, seed },
    );
    console.log(`route spellings: ${runs} cases, ${seen.ran} reached a handler (each checked), ${seen.refusedShape} refused or unmatched`);
    // The generator must reach handlers, or the property proves nothing.
    expect(seen.ran).toBeGreaterThan(runs / 5);
  }, 600_000);
});

describe('the rate limit counts every spelling', () => {
  let limited: RunningGateway;
  beforeAll(async () => {
    limited = await startGateway({ env: { API_KEYS: '', API_KEYS_FILE: file, RATE_LIMIT_PER_MINUTE: '3', LOG_LEVEL: 'warn' } });
  });
  afterAll(() => limited?.close());

  it('three of /%761/models and its other spellings, then 429', async () => {
    const statuses = [];
    for (const target of ['/%761/models', '/v%31/models', '/%76%31/models', '/v1/models', '/%761/models']) {
      statuses.push((await rawRequest(limited.baseUrl, { target, headers: { authorization: `Bearer ${key.sys1}` } })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });
});
