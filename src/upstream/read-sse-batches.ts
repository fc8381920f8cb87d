// Server-sent events → the `data` payload of each event. Comments (keep-alives) and other fields are dropped.
// The parser is synchronous so a consumer can handle every event of one network read without an await per event.

export interface SseParser {
  /** Feed decoded text; returns the data of every event it completed. */
  push(text: string): string[];
  /** End of input: a final event without its blank line still counts. */
  end(): string[];
}

export function createSseParser(): SseParser {
  let buf = '';
  let data: string[] = [];
  const field = (line: string) => line.slice(line.charCodeAt(5) === 32 ? 6 : 5);
  return {
    push(text) {
      buf += text;
      const events: string[] = [];
      let start = 0;
      let nl: number;
      while ((nl = buf.indexOf('\n', start)) >= 0) {
        let line = buf.slice(start, nl);
        start = nl + 1;
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line === '') {
          if (data.length) events.push(data.join('\n'));
          data = [];
        } else if (line.startsWith('data:')) {
          data.push(field(line));
        }
      }
      buf = buf.slice(start);
      return events;
    },
    end() {
      if (buf.startsWith('data:')) data.push(field(buf));
      buf = '';
      const events = data.length ? [data.join('\n')] : [];
      data = [];
      return events;
    },
  };
}

/** The events of each network read, together (possibly none); the last batch flushes what the body left open. */
export async function* readSseBatches(body: AsyncIterable<Uint8Array>): AsyncGenerator<string[]> {
  const decoder = new TextDecoder();
  const parser = createSseParser();
  for await (const bytes of body) yield parser.push(decoder.decode(bytes, { stream: true }));
  yield [...parser.push(decoder.decode()), ...parser.end()];
}
