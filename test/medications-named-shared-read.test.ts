// Issue 29 review: the Medication catalogue read that concurrent drug-name searches share (src/tools/medication/medications-named.ts)
// belongs to no one caller. The first caller aborting stops its own wait only; the second still gets its answer from
// the same read, and the read stops only once nobody waits for it. The embedded FHIR server behind the HTTP client,
// whose fetch is held (and honours its signal, as fetch does) until the test lets the catalogue read through.
import { beforeAll, describe, expect, it } from 'vitest';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { createEmbeddedFhirServer, type EmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';
import { medicationsNamed } from '../src/tools/medication/medications-named.ts';
import type { ToolContext } from '../src/tools/kit/tool.ts';

let server: EmbeddedFhirServer;
let run = 0;

beforeAll(async () => {
  server = await createEmbeddedFhirServer({ baseUrl: 'http://shared-read.test/fhir' });
  await server.loadBundles([
    {
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        {
          resource: { resourceType: 'Medication', code: { text: 'Metformin 500 mg tablet' } },
          request: { method: 'POST', url: 'Medication' },
        },
        {
          resource: { resourceType: 'Medication', code: { text: 'Lisinopril 10 mg tablet' } },
          request: { method: 'POST', url: 'Medication' },
        },
      ],
    },
  ]);
});

/** A client whose catalogue reads wait for `release()`; `started` settles when the first one is sent. */
function heldClient() {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const sent = new Promise<void>((resolve) => (started = resolve));
  const reads: string[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    if (/\/Medication\?/.test(url)) {
      reads.push(url);
      started();
      await Promise.race([
        held,
        new Promise((_, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason), { once: true })),
      ]);
    }
    init?.signal?.throwIfAborted();
    return server.fetch(input, init);
  };
  return { fhir: createMedplumFhirClient({ baseUrl: server.baseUrl, fetch, retries: 0 }), release, sent, reads };
}

function contextFor(fhir: ToolContext['fhir'], callerId: string, signal: AbortSignal): ToolContext {
  return { fhir, signal, callerId, now: () => new Date(), writesEnabled: false, callId: 'c' };
}

describe('the shared Medication catalogue read', () => {
  it('the first caller aborts: the second still gets its answer, from the one read', async () => {
    const { fhir, release, sent, reads } = heldClient();
    const caller = `caller-${++run}`;
    const first = new AbortController();
    const second = new AbortController();
    const a = medicationsNamed('metformin', contextFor(fhir, caller, first.signal));
    const b = medicationsNamed('metformin', contextFor(fhir, caller, second.signal));
    await sent;
    first.abort();
    await expect(a).rejects.toMatchObject({ name: 'AbortError' });
    release();
    const answer = await b;
    expect([...answer.names.values()]).toEqual(['Metformin 500 mg tablet']);
    expect(reads).toHaveLength(1);
  });

  it('every caller aborts: the read stops, and the next caller reads afresh', async () => {
    const { fhir, release, sent, reads } = heldClient();
    const caller = `caller-${++run}`;
    const first = new AbortController();
    const second = new AbortController();
    const a = medicationsNamed('metformin', contextFor(fhir, caller, first.signal));
    const b = medicationsNamed('lisinopril', contextFor(fhir, caller, second.signal));
    await sent;
    first.abort();
    second.abort();
    await expect(a).rejects.toMatchObject({ name: 'AbortError' });
    await expect(b).rejects.toMatchObject({ name: 'AbortError' });
    release();
    const answer = await medicationsNamed('lisinopril', contextFor(fhir, caller, new AbortController().signal));
    expect([...answer.names.values()]).toEqual(['Lisinopril 10 mg tablet']);
    expect(reads).toHaveLength(2);
  });
});
