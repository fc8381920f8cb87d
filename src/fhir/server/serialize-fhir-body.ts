// A response body to JSON without holding the event loop for the whole of a large answer: Bundles (and the Bundles
// a batch answers with) are written entry by entry, yielding to the loop every few hundred entries, and writing
// stops as soon as the text passes `maxBytes` (FHIR_MAX_RESPONSE_BYTES), before anything was sent. A small body
// takes the one JSON.stringify it always took.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Bundle } from '@medplum/fhirtypes';

/** Entries written between two turns of the event loop (a page of 200 resources takes about a millisecond). */
const SLICE = 200;

/** `parts`: the JSON in pieces, to be written one after another (a large answer is never one string). */
export type SerializedBody = { ok: true; parts: string[] } | { ok: false; bytes: number };

const isBundle = (v: unknown): v is Bundle => (v as Bundle | undefined)?.resourceType === 'Bundle';

/** Entries in a body, nested Bundles' included: what decides whether it is written in slices. */
function entryCount(value: unknown): number {
  if (!isBundle(value)) return 0;
  let n = 0;
  for (const e of value.entry ?? []) n += 1 + entryCount(e?.resource);
  return n;
}

class Writer {
  readonly parts: string[] = [];
  bytes = 0;
  sinceYield = 0;
  constructor(private readonly maxBytes: number) {}
  /** False once past the limit. */
  push(text: string): boolean {
    this.parts.push(text);
    this.bytes += Buffer.byteLength(text);
    return this.bytes <= this.maxBytes;
  }
}

async function write(value: unknown, out: Writer): Promise<boolean> {
  if (!isBundle(value) || !value.entry?.length) return out.push(JSON.stringify(value));
  const { entry, ...rest } = value;
  const head = JSON.stringify(rest);
  if (!out.push(`${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"entry":[`)) return false;
  for (const [i, e] of entry.entries()) {
    if (i > 0 && !out.push(',')) return false;
    if (++out.sinceYield >= SLICE) {
      out.sinceYield = 0;
      await yieldToLoop();
    }
    if (isBundle(e?.resource) && e.resource.entry?.length) {
      const { resource, ...others } = e;
      const open = JSON.stringify(others);
      if (!out.push(`${open.slice(0, -1)}${open.length > 2 ? ',' : ''}"resource":`)) return false;
      if (!(await write(resource, out)) || !out.push('}')) return false;
    } else if (!out.push(JSON.stringify(e))) return false;
  }
  return out.push(']}');
}

export async function serializeFhirBody(body: unknown, maxBytes: number): Promise<SerializedBody> {
  if (entryCount(body) <= SLICE) {
    const text = JSON.stringify(body);
    const bytes = Buffer.byteLength(text);
    return bytes <= maxBytes ? { ok: true, parts: [text] } : { ok: false, bytes };
  }
  const out = new Writer(maxBytes);
  return (await write(body, out)) ? { ok: true, parts: out.parts } : { ok: false, bytes: out.bytes };
}
