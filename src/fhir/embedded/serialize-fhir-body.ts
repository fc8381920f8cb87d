// A response body to JSON without holding the event loop for the whole of a large Bundle: entry by entry, yielding
// between slices, and stopping as soon as the text would pass `maxBytes` (FHIR_MAX_RESPONSE_BYTES), before anything
// was sent. Small bodies take the one JSON.stringify they always took.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Bundle } from '@medplum/fhirtypes';

/** Below this many entries a body is stringified in one go (a page of 50 takes well under a millisecond). */
const SLICE = 200;

export type SerializedBody = { ok: true; text: string } | { ok: false; bytes: number };

export async function serializeFhirBody(body: unknown, maxBytes: number): Promise<SerializedBody> {
  const bundle = body as Bundle | undefined;
  const entries = bundle?.resourceType === 'Bundle' ? (bundle.entry ?? []) : [];
  if (entries.length <= SLICE) {
    const text = JSON.stringify(body);
    const bytes = Buffer.byteLength(text);
    return bytes <= maxBytes ? { ok: true, text } : { ok: false, bytes };
  }
  const { entry: _entry, ...rest } = bundle!;
  const head = JSON.stringify(rest);
  const parts: string[] = [`${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"entry":[`];
  let bytes = Buffer.byteLength(parts[0]) + 2;
  for (let i = 0; i < entries.length; i += SLICE) {
    if (i > 0) await yieldToLoop();
    const slice = entries
      .slice(i, i + SLICE)
      .map((e) => JSON.stringify(e))
      .join(',');
    const piece = i === 0 ? slice : `,${slice}`;
    bytes += Buffer.byteLength(piece);
    if (bytes > maxBytes) return { ok: false, bytes };
    parts.push(piece);
  }
  parts.push(']}');
  return { ok: true, text: parts.join('') };
}
