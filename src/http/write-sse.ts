// Writes the SSE response. Once the first byte is out the status is fixed, so failures become a
// `data: {"error":{...}}` event before the connection closes, and the stream always ends (finally).
import type { FastifyReply } from 'fastify';
import type { ApiError } from '../openai/api-error.ts';
import type { createChunkEncoder, Emitted, IndexedDelta } from './chunk-encoder.ts';

export async function writeSse(o: {
  reply: FastifyReply;
  encoder: ReturnType<typeof createChunkEncoder>;
  deltas: AsyncIterable<IndexedDelta>;
  requestId: string;
  onError: (err: unknown) => ApiError;
}): Promise<void> {
  const raw = o.reply.raw;
  o.reply.hijack();
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': o.requestId,
  });
  const write = async (s: string) => {
    if (raw.destroyed) throw new Error('client disconnected');
    if (!raw.write(s)) await new Promise<void>((resolve) => (raw.once('drain', resolve), raw.once('close', resolve)));
  };
  const emit = async (list: Emitted[]) => {
    let out = '';
    for (const e of list) out += e.kind === 'keepalive' ? ': keep-alive\n\n' : `data: ${JSON.stringify(e.chunk)}\n\n`;
    if (out) await write(out);
  };
  try {
    await emit(o.encoder.start());
    for await (const d of o.deltas) await emit(o.encoder.encode(d));
    await emit(o.encoder.end());
    await write('data: [DONE]\n\n');
  } catch (err) {
    if (!raw.destroyed) raw.write(`data: ${JSON.stringify(o.onError(err).toEnvelope())}\n\n`);
  } finally {
    raw.end();
  }
}
