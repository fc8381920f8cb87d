// Issue 19, the differential half for /fhir: the decision and the answer for a target spelled any way equal those
// for its canonical form, or the spelling is refused (400) as not understood; there is no third reading. Generated
// canonical searches and reads, respelled with percent-escapes of any character (path and parameter names), `+`
// for spaces, doubled and dot segments, trailing slashes and fragments, sent with a system key and a patient key.
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { OWN_PATIENT, writeAttackKeys } from './support/attack-keys.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { rawRequest } from './support/raw-request.ts';

const { file, key } = writeAttackKeys();
const runs = Number(process.env.FUZZ_RUNS ?? 800);
const seed = Number(process.env.FUZZ_SEED ?? 19_021);
let gw: RunningGateway;

const canonical = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('Observation', 'Condition', 'Encounter'),
      fc.constantFrom(OWN_PATIENT, 'S1000002'),
      fc.subarray([
        ['_summary', 'count'],
        ['_count', '3'],
        ['_elements', 'id'],
        ['code:text', 'blood pressure'],
        ['_sort', '-date'],
      ]),
    )
    .map(([type, patient, more]) => ({ path: [type], pairs: [['patient', patient], ...more] })),
  fc.constantFrom(OWN_PATIENT, 'S1000002').map((id) => ({ path: ['Patient', id], pairs: [] as string[][] })),
);

const escape = (c: string, upper: boolean) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')[upper ? 'toUpperCase' : 'toLowerCase']()}`;
const respell = (text: string, mask: boolean[]) => [...text].map((c, i) => (mask[i % mask.length] ? escape(c, i % 2 === 0) : c)).join('');

const spelled = canonical.chain((c) =>
  fc
    .record({
      mask: fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }),
      names: fc.boolean(),
      shape: fc.constantFrom('plain', 'trailing', 'double', 'dot', 'fragment', 'plus'),
    })
    .map(({ mask, names, shape }) => {
      const path = c.path.map((s) => respell(s, mask)).join(shape === 'double' ? '//' : shape === 'dot' ? '/./' : '/');
      const query = c.pairs
        .map(
          ([k, v]) =>
            `${names ? respell(k, mask) : encodeURIComponent(k)}=${shape === 'plus' ? v.replaceAll(' ', '+') : encodeURIComponent(v)}`,
        )
        .join('&');
      const target = `/fhir/${path}${shape === 'trailing' ? '/' : ''}${query ? `?${query}` : ''}${shape === 'fragment' ? `#&patient=${OWN_PATIENT}` : ''}`;
      const plain = `/fhir/${c.path.join('/')}${c.pairs.length ? `?${new URLSearchParams(c.pairs)}` : ''}`;
      return { target, plain, structural: ((shape === 'double' || shape === 'dot') && c.path.length > 1) || shape === 'fragment' };
    }),
);

/** An answer without what legitimately differs between two requests for the same thing: links and ids of this answer. */
const comparable = (text: string) => JSON.stringify(JSON.parse(text), (k, v) => (k === 'link' || k === 'lastUpdated' ? undefined : v));

beforeAll(async () => {
  gw = await startGateway({ env: { API_KEYS: '', API_KEYS_FILE: file, FHIR_SEED: 'true', RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn' } });
});
afterAll(() => gw?.close());

it(`a respelled /fhir target (${runs} cases, seed ${seed}) is answered as its canonical form, or refused as not understood`, async () => {
  const tally = { same: 0, refused: 0 };
  await fc.assert(
    fc.asyncProperty(spelled, fc.constantFrom(key.sys1, key.pat1), async ({ target, plain, structural }, k) => {
      const headers = { authorization: `Bearer ${k}` };
      const [a, b] = await Promise.all([rawRequest(gw.baseUrl, { target, headers }), rawRequest(gw.baseUrl, { target: plain, headers })]);
      if (a.status === 400 && JSON.parse(a.text).resourceType === 'OperationOutcome') {
        tally.refused++;
        return;
      }
      expect(structural, `${target} was answered (${a.status}); a structural respelling must be refused`).toBe(false);
      expect(a.status, `${target} vs ${plain}`).toBe(b.status);
      expect(comparable(a.text), `${target} vs ${plain}`).toBe(comparable(b.text));
      tally.same++;
    }),
    { numRuns: runs, seed },
  );
  console.log(`fhir spellings: ${tally.same} answered as their canonical form, ${tally.refused} refused`);
  expect(tally.same).toBeGreaterThan(runs / 3);
}, 600_000);
