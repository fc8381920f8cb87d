// Turns one file into request-sized chunks of entries. Streams NDJSON; reads a bundle whole (it is one request).
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { gunzipSync, createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import {
  BundleEntrySchema,
  BundleFileSchema,
  ResourceSchema,
  describeZodError,
  type ChunkMode,
  type FileChunk,
  type RawEntry,
} from './input-schemas.ts';
import type { PlannedFile } from './plan-load-files.ts';

/** Thrown for a file that cannot be read at all; the loader reports it once with entryIndex -1. */
class UnreadableFileError extends Error {}

function modeFor(bundleType: string): ChunkMode {
  // collection (and searchset, document, ...) becomes a transaction of PUTs.
  return bundleType === 'batch' ? 'batch' : 'transaction';
}

function toRawEntry(value: unknown, index: number): RawEntry {
  const parsed = BundleEntrySchema.safeParse(value);
  if (!parsed.success) return { index, error: `invalid entry: ${describeZodError(parsed.error)}` };
  const { fullUrl, resource, request } = parsed.data;
  return { index, fullUrl, resource, request };
}

async function readBundleChunk(file: PlannedFile): Promise<FileChunk> {
  let json: unknown;
  try {
    const bytes = await readFile(file.path);
    json = JSON.parse((file.gzip ? gunzipSync(bytes) : bytes).toString('utf8'));
  } catch (error) {
    throw new UnreadableFileError(`not valid JSON: ${(error as Error).message}`);
  }
  const bundle = BundleFileSchema.safeParse(json);
  if (bundle.success) {
    const entries = (bundle.data.entry ?? []).map(toRawEntry);
    return { mode: modeFor(bundle.data.type), entries, bytesRead: file.size };
  }
  // A file holding one resource loads as a collection of one.
  const single = ResourceSchema.safeParse(json);
  if (single.success && single.data.resourceType !== 'Bundle') {
    return { mode: 'transaction', entries: [{ index: 0, resource: single.data }], bytesRead: file.size };
  }
  throw new UnreadableFileError(`not a FHIR Bundle or resource: ${describeZodError(bundle.error)}`);
}

function parseLine(line: string, index: number): RawEntry {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch (error) {
    return { index, error: `invalid JSON: ${(error as Error).message}` };
  }
  const parsed = ResourceSchema.safeParse(json);
  if (!parsed.success) return { index, error: `invalid resource: ${describeZodError(parsed.error)}` };
  return { index, resource: parsed.data };
}

async function* readNdjsonChunks(file: PlannedFile, chunkSize: number): AsyncGenerator<FileChunk> {
  const raw = createReadStream(file.path);
  const stream: Readable = file.gzip ? raw.pipe(createGunzip()) : raw;
  // A corrupt gzip stream errors the pipe, not the source; surface it through the line reader.
  const failure = new Promise<never>((_, reject) => {
    stream.on('error', (e) => reject(new UnreadableFileError(`cannot read: ${e.message}`)));
    raw.on('error', (e) => reject(new UnreadableFileError(`cannot read: ${e.message}`)));
  });
  failure.catch(() => undefined);
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  const iterator = lines[Symbol.asyncIterator]();
  let index = 0;
  let batch: RawEntry[] = [];
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), failure]);
      if (next.done) break;
      const line = next.value.trim();
      if (line) batch.push(parseLine(line, index));
      index++;
      if (batch.length >= chunkSize) {
        yield { mode: 'batch', entries: batch, bytesRead: raw.bytesRead };
        batch = [];
      }
    }
    if (batch.length) yield { mode: 'batch', entries: batch, bytesRead: raw.bytesRead };
  } finally {
    lines.close();
    raw.destroy();
  }
}

/** Yields chunks; throws UnreadableFileError (possibly after some chunks, for a truncated gzip). */
export async function* readFileChunks(file: PlannedFile, chunkSize: number): AsyncGenerator<FileChunk> {
  if (file.kind === 'ndjson') {
    yield* readNdjsonChunks(file, chunkSize);
    return;
  }
  yield await readBundleChunk(file);
}
