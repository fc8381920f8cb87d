// Isolation. Two strategies, recorded in the log header:
// - 'fork' (embedded store, the default): each scenario runs on its own fork() of the loaded store, so writes
//   cannot leak between scenarios and nothing needs cleaning.
// - 'cleanup' (external server such as HAPI, or an embedded store shared with a gateway): scenarios touching the
//   same patient run one at a time, and every resource a scenario wrote is deleted once it is scored.
import type { Bundle, Resource } from '@medplum/fhirtypes';
import type { FhirClient } from '../../src/fhir/client/fhir-client.ts';
import type { Scenario } from '../scenario.ts';
import { KeyedLock } from './keyed-lock.ts';
import { recordingFetch, type FhirRequestEntry } from './recording-fetch.ts';

export interface Sandbox {
  fhir: FhirClient;
  /** Everything written for this scenario (through the harness's client, plus a patient-scoped diff when asked). */
  writes(): Promise<Resource[]>;
  /** `Type/id` of every resource the harness's client was sent back (reads and search pages). */
  reads?(): string[];
  /** Every FHIR request of the harness's client so far (method, URL, status, time). */
  requests?(): FhirRequestEntry[];
  release(): Promise<void>;
}

export interface FhirEnvironment {
  isolation: 'fork' | 'cleanup';
  description: string;
  acquire(scenario: Scenario, opts: { snapshot: boolean }): Promise<Sandbox>;
  close(): Promise<void>;
}

export type ClientFactory = (opts: { baseUrl: string; fetch?: typeof fetch; headers?: Record<string, string> }) => FhirClient;

/** Resource types the write tools create; a patient-scoped diff over them catches writes made out of our sight (the gateway). */
const WRITE_TYPES = ['Observation', 'MedicationRequest', 'ServiceRequest'] as const;

export interface ForkableStore {
  fetch: typeof fetch;
  fork(): Promise<{ fetch: typeof fetch }>;
}

export function forkEnvironment(store: ForkableStore, makeClient: ClientFactory): FhirEnvironment {
  return {
    isolation: 'fork',
    description: 'embedded store, forked per scenario',
    async acquire() {
      const fork = await store.fork();
      const rec = recordingFetch(fork.fetch);
      const fhir = makeClient({ baseUrl: 'http://embedded.local/fhir', fetch: rec.fetch });
      return { fhir, writes: async () => rec.writes(), reads: () => rec.reads(), requests: () => rec.requests(), release: async () => {} };
    },
    async close() {},
  };
}

export function cleanupEnvironment(opts: {
  baseUrl: string;
  fetch?: typeof fetch;
  headers?: Record<string, string>;
  makeClient: ClientFactory;
  description: string;
}): FhirEnvironment {
  const lock = new KeyedLock();
  const admin = opts.makeClient({ baseUrl: opts.baseUrl, fetch: opts.fetch, headers: opts.headers });
  return {
    isolation: 'cleanup',
    description: opts.description,
    async acquire(scenario, { snapshot }) {
      const unlock = await lock.acquire(scenario.patients.length ? scenario.patients : [`scenario:${scenario.id}`]);
      try {
        const rec = recordingFetch(opts.fetch ?? fetch);
        const fhir = opts.makeClient({ baseUrl: opts.baseUrl, fetch: rec.fetch, headers: opts.headers });
        const before = snapshot ? await patientResourceIds(admin, scenario.patients) : undefined;
        let cached: Resource[] | undefined;
        const writes = async () => {
          if (cached) return cached;
          const found = new Map(rec.writes().map((r) => [`${r.resourceType}/${r.id}`, r]));
          if (before) {
            const after = await patientResources(admin, scenario.patients);
            for (const r of after) if (!before.has(`${r.resourceType}/${r.id}`)) found.set(`${r.resourceType}/${r.id}`, r);
          }
          return (cached = [...found.values()]);
        };
        return {
          fhir,
          writes,
          reads: () => rec.reads(),
          requests: () => rec.requests(),
          async release() {
            try {
              const toDelete = await writes();
              if (toDelete.length) await admin.executeBatch(deleteBundle(toDelete));
            } finally {
              unlock();
            }
          },
        };
      } catch (err) {
        unlock();
        throw err;
      }
    },
    async close() {},
  };
}

async function patientResources(fhir: FhirClient, patients: string[]): Promise<Resource[]> {
  if (!patients.length) return [];
  // One search per patient and type: comma-OR on references is not supported everywhere.
  const lists = await Promise.all(
    WRITE_TYPES.flatMap((type) =>
      patients.map(async (patient) => (await fhir.searchResources(type, { patient }, { maxResults: 100_000 })).resources),
    ),
  );
  return lists.flat();
}

async function patientResourceIds(fhir: FhirClient, patients: string[]): Promise<Set<string>> {
  return new Set((await patientResources(fhir, patients)).map((r) => `${r.resourceType}/${r.id}`));
}

function deleteBundle(resources: Resource[]): Bundle {
  return {
    resourceType: 'Bundle',
    type: 'batch',
    entry: resources.map((r) => ({ request: { method: 'DELETE', url: `${r.resourceType}/${r.id}` } })),
  };
}
