// Replays exchanges recorded from a real server (fixtures/upstream/<server>/<name>.json, written by
// test/<server>/record-fixtures.ts) through the fake upstream: the recorded status, headers and body, byte for
// byte for streams (the raw SSE text), and the recorded GET /v1/models listing so dialect detection sees what the
// real server shows. An exchange whose server died mid-request (no response) is replayed as a dropped connection.
import { readFileSync } from 'node:fs';
import { startFakeUpstream, type FakeResponse, type FakeUpstream, type RecordedRequest } from './fake-upstream.ts';

export interface RecordedExchange {
  /** The fixture's file name without `.json`. */
  name: string;
  /** What the exchange shows, in one or two sentences. */
  note: string;
  request: { method: string; path: string; body?: unknown };
  /** Null when the server sent no response at all (it crashed or reset the connection). */
  response: { status: number; headers: Record<string, string>; body: unknown } | null;
  /** How the client saw a missing response (e.g. undici's `UND_ERR_SOCKET`, "other side closed"). */
  error?: { code?: string; message: string };
  /** What the server itself showed: its exit when it died, and the log lines the request caused. */
  server?: { exit?: { code: number | null; signal: string | null }; log: string[] };
}

export function loadExchange(server: string, name: string): RecordedExchange {
  return JSON.parse(readFileSync(new URL(`../../fixtures/upstream/${server}/${name}.json`, import.meta.url), 'utf8')) as RecordedExchange;
}

/** The fake-upstream reply that reproduces a recorded response; undefined for an exchange with none. */
function toFakeResponse(ex: RecordedExchange): FakeResponse | undefined {
  if (!ex.response) return undefined;
  const { status, headers, body } = ex.response;
  // A string body goes out as is (SSE text, plain-text errors) under the recorded content-type.
  return { status, headers, body };
}

export interface RecordedUpstream {
  /** Ends in /v1: give it to the gateway as UPSTREAM_BASE_URL. */
  baseUrl: string;
  fake: FakeUpstream;
  /** Chat requests the gateway sent, in order. */
  requests: RecordedRequest[];
  /** Queue recorded exchanges: each chat request gets the next one. */
  replay(...names: string[]): void;
  /** Exchanges queued but not yet served (a test that expects the gateway to call upstream N times checks 0). */
  pending(): number;
  close(): Promise<void>;
}

/** A fake upstream that answers GET /v1/models with the server's recorded listing and chat requests from the queue. */
export async function startRecordedUpstream(server: string): Promise<RecordedUpstream> {
  const queue: RecordedExchange[] = [];
  const fake = await startFakeUpstream({
    models: loadExchange(server, 'models').response?.body,
    handler: () => {
      const ex = queue.shift();
      if (!ex) return { status: 500, body: { error: { message: `recorded upstream (${server}): no exchange queued` } } };
      const reply = toFakeResponse(ex);
      // Thrown, the fake destroys the socket before any byte: what a crashed server does to its client.
      if (!reply) throw new Error(`replaying ${ex.name}: the server sent no response`);
      return reply;
    },
  });
  return {
    baseUrl: fake.baseUrl,
    fake,
    requests: fake.requests,
    replay: (...names) => queue.push(...names.map((n) => loadExchange(server, n))),
    pending: () => queue.length,
    close: () => fake.close(),
  };
}
