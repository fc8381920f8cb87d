// Turns one file into request-sized chunks of entries. Streams NDJSON; reads a bundle whole (it is one request).
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
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
  const raw = createReadStream(file.path, { highWaterMark: 1 << 20 });
  const stream: Readable = file.gzip ? raw.pipe(createGunzip({ chunkSize: 1 << 20 })) : raw;
  // A corrupt gzip stream errors the pipe, not the source: the source's errors are passed on to what is read.
  if (stream !== raw) raw.on('error', (e) => stream.destroy(e));
  // Lines split by hand from large decoded chunks: readline's async iterator cost a promise (and a race with the
  // error) per line, which was most of the time spent reading 150k-line files.
  const decoder = new StringDecoder('utf8');
  let index = 0;
  let rest = '';
  let batch: RawEntry[] = [];
  const take = (line: string) => {
    const trimmed = line.trim();
    if (trimmed) batch.push(parseLine(trimmed, index));
    index++;
  };
  try {
    for await (const chunk of stream) {
      const text = rest + decoder.write(chunk as Buffer);
      let from = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
        take(text.slice(from, nl));
        from = nl + 1;
        if (batch.length >= chunkSize) {
          yield { mode: 'batch', entries: batch, bytesRead: raw.bytesRead };
          batch = [];
        }
      }
      rest = text.slice(from);
    }
    rest += decoder.end();
    if (rest.trim()) take(rest);
    if (batch.length) yield { mode: 'batch', entries: batch, bytesRead: raw.bytesRead };
  } catch (error) {
    throw new UnreadableFileError(`cannot read: ${(error as Error).message}`);
  } finally {
    raw.destroy();
    if (stream !== raw) stream.destroy();
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
