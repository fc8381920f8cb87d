// Server-sent events → the `data` payload of each event. Comments (keep-alives) and other fields are dropped.
// The parser is synchronous so a consumer can handle every event of one network read without an await per event,
// and it gives the common event (one `data:` line) as its place in the decoded text, so the stream normaliser reads
// most chunks where they arrived: one pass from the upstream's bytes to deltas (issue 30).
import { StringDecoder } from 'node:string_decoder';
import { UpstreamError } from './upstream-error.ts';

/**
 * The longest line, and the longest event's data, the parser takes, in UTF-16 code units (bytes, for the ASCII JSON
 * servers send). A constant, not a setting: a real chunk is a few hundred bytes, and without a bound an upstream
 * that never ends its line makes the gateway buffer all of it.
 */
export const MAX_SSE_EVENT_CHARS = 8 << 20;

/**
 * The events one push completed, in order: an event that is one `data:` line and then a blank line, the common case,
 * as two numbers, where its data starts and ends in the text pushed (nothing is sliced: a reader that recognises the
 * bytes takes them in place); any other event as its data.
 */
export type SseEvents = Array<string | number>;

/** The data of each event, as strings. */
export function eventData(text: string, events: SseEvents): string[] {
  const out: string[] = [];
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    out.push(typeof e === 'string' ? e : text.slice(e, events[++i] as number));
  }
  return out;
}

export interface SseParser {
  /** Feed decoded text; returns the events it completed. Throws an UpstreamError past the size bound. */
  push(text: string): SseEvents;
  /** End of input: a final event without its blank line still counts. */
  end(): string[];
}

const oversized = (max: number) =>
  new UpstreamError(`upstream sent an oversized stream event (over ${max} characters)`, { statusCode: 502 });

/** `data:` at `at` (d, a, t, a, colon). */
const isDataField = (text: string, at: number) =>
  text.charCodeAt(at) === 100 &&
  text.charCodeAt(at + 1) === 97 &&
  text.charCodeAt(at + 2) === 116 &&
  text.charCodeAt(at + 3) === 97 &&
  text.charCodeAt(at + 4) === 58;

export function createSseParser(maxEventChars = MAX_SSE_EVENT_CHARS): SseParser {
  // The unfinished line, as the pieces it arrived in: they hold no newline, so each character is searched once,
  // and they are joined once, when the line ends (a growing string would be copied on every read).
  const pieces: string[] = [];
  let piecesLength = 0;
  /** The event's data so far (several data lines joined by \n); null before its first data line. */
  let data: string | null = null;
  const field = (line: string) => line.slice(line.charCodeAt(5) === 32 ? 6 : 5);
  const line = (l: string, events: SseEvents) => {
    if (l.charCodeAt(l.length - 1) === 13) l = l.slice(0, -1);
    if (l.length > maxEventChars) throw oversized(maxEventChars);
    if (l === '') {
      if (data !== null) events.push(data);
      data = null;
    } else if (l.startsWith('data:')) {
      data = data === null ? field(l) : `${data}\n${field(l)}`;
      if (data.length > maxEventChars) throw oversized(maxEventChars);
    }
  };
  const takeLine = (tail: string) => {
    const l = pieces.length === 1 ? pieces[0] + tail : pieces.join('') + tail;
    pieces.length = 0;
    piecesLength = 0;
    return l;
  };
  return {
    push(text) {
      const events: SseEvents = [];
      let start = 0;
      let nl = text.indexOf('\n');
      if (nl >= 0 && pieces.length) {
        line(takeLine(text.slice(0, nl)), events);
        start = nl + 1;
        nl = text.indexOf('\n', start);
      }
      for (; nl >= 0; nl = text.indexOf('\n', start)) {
        // A whole one-line event, nothing pending before it: its place, not a slice.
        if (data === null && text.charCodeAt(nl + 1) === 10 && nl - start <= maxEventChars && isDataField(text, start)) {
          events.push(text.charCodeAt(start + 5) === 32 ? start + 6 : start + 5, nl);
          start = nl + 2;
          continue;
        }
        line(text.slice(start, nl), events);
        start = nl + 1;
      }
      if (start < text.length) {
        piecesLength += text.length - start;
        if (piecesLength > maxEventChars) throw oversized(maxEventChars);
        pieces.push(start === 0 ? text : text.slice(start));
      }
      return events;
    },
    end() {
      const events: string[] = [];
      const rest = takeLine('');
      if (rest.startsWith('data:')) line(rest, events);
      if (data !== null) events.push(data);
      data = null;
      return events;
    },
  };
}

/** One network read: its decoded text and the events it completed. */
export interface SseRead {
  text: string;
  events: SseEvents;
}

/**
 * The events of each network read, together (possibly none); the last read flushes what the body left open. Socket
 * errors mid-body become UpstreamErrors: an upstream failure, not ours.
 */
export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseRead> {
  // Node's StringDecoder, not TextDecoder, whose streaming mode goes through ICU: 7 against 30 µs for a burst
  // stream's 38 KB, and 9% less gateway CPU per burst stream (issue 30, docs/benchmarks.md).
  const decoder = new StringDecoder('utf8');
  const parser = createSseParser();
  const it = body[Symbol.asyncIterator]();
  let ended = false;
  let sawDone = false;
  let first = true;
  const read = async () => {
    try {
      return await it.next();
    } catch (cause) {
      // An abort is the caller's; an UpstreamError already says what went wrong.
      if ((cause as Error)?.name === 'AbortError' || cause instanceof UpstreamError) throw cause;
      throw new UpstreamError('upstream connection dropped mid-stream', { cause });
    }
  };
  try {
    for (let r = await read(); !r.done; r = await read()) {
      let text = decoder.write(r.value);
      if (first && text) {
        first = false;
        // A leading byte order mark is not part of the stream (the SSE spec; TextDecoder dropped it too).
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      const events = parser.push(text);
      sawDone = includesDone(text, events);
      yield { text, events };
    }
    ended = true;
    const text = decoder.end();
    yield { text, events: [...parser.push(text), ...parser.end()] };
  } finally {
    if (!ended) await (sawDone ? releaseAfterDone(it, body) : it.return?.());
  }
}

/** Whether a read's events include OpenAI's `[DONE]` (the reader then stops). From the end: it is usually last. */
function includesDone(text: string, events: SseEvents): boolean {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (typeof e === 'string') {
      if (e === '[DONE]') return true;
      continue;
    }
    // A pair: i is its end, i - 1 its start.
    const from = events[--i] as number;
    if (e - from === 6 && text.startsWith('[DONE]', from)) return true;
  }
  return false;
}

/**
 * The reader stopped at OpenAI's `[DONE]`. Its body's end is usually already on its way: read to it, because a Node
 * stream stopped early is destroyed with an AbortError, whose stack trace cost about 3% of a burst stream (issue 30
 * profile), and its connection is closed instead of reused. Anything else (more bytes, or nothing by the next
 * macrotask) and the body is let go as before, once its pending read settles or a second has passed.
 */
async function releaseAfterDone(it: AsyncIterator<Uint8Array>, body: AsyncIterable<Uint8Array>): Promise<void> {
  const next = it.next();
  const first = await Promise.race([next, new Promise<'later'>((resolve) => setImmediate(resolve, 'later'))]).catch(() => undefined);
  if (first === undefined || (first !== 'later' && first.done)) return;
  if (first !== 'later') {
    await it.return?.();
    return;
  }
  // An upstream that sends [DONE] and then neither ends nor writes would keep its socket until the upstream timeout:
  // a second is plenty for an end already on its way. The iterator's return() would queue behind the pending read, so
  // a Node stream (undici's body) is destroyed instead.
  const destroy = (body as { destroy?: () => void }).destroy;
  const giveUp = setTimeout(
    () => (destroy ? destroy.call(body) : void Promise.resolve(it.return?.()).catch(() => undefined)),
    RELEASE_AFTER_DONE_MS,
  );
  giveUp.unref();
  void next
    .then((r) => {
      clearTimeout(giveUp);
      return r.done ? undefined : it.return?.();
    })
    .catch(() => undefined);
}

/** How long a body may stay open after `[DONE]` before the reader lets it go. */
const RELEASE_AFTER_DONE_MS = 1000;
