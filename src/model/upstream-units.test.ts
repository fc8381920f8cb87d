// Units of the upstream layer: think-tag splitting at every split point, JSON extraction, the SSE reader.
// Per-dialect request bodies, usage, errors and detection are in upstream-dialects.test.ts.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { extractJson } from '../vocabulary/openai/extract-json.ts';
import { createSseParser, eventData, readSse } from './read-sse.ts';
import { createThinkSplitter } from './think-splitter.ts';
import { UpstreamError } from './upstream-error.ts';

function split(pieces: string[]) {
  const s = createThinkSplitter();
  const out = [...pieces.flatMap((p) => s.push(p)), ...s.end()];
  return {
    reasoning: out
      .filter((p) => p.type === 'reasoning')
      .map((p) => p.text)
      .join(''),
    content: out
      .filter((p) => p.type === 'content')
      .map((p) => p.text)
      .join(''),
  };
}

describe('think splitter', () => {
  const text = '  <think>K 5.8 is high</think>\n\nPotassium is high.';
  it('gives the same answer for every way of cutting the text in two and three pieces', () => {
    for (let i = 0; i <= text.length; i++) {
      expect(split([text.slice(0, i), text.slice(i)])).toEqual({ reasoning: 'K 5.8 is high', content: 'Potassium is high.' });
      for (let j = i; j <= text.length; j += 3) {
        expect(split([text.slice(0, i), text.slice(i, j), text.slice(j)])).toEqual({
          reasoning: 'K 5.8 is high',
          content: 'Potassium is high.',
        });
      }
    }
  });
  it('passing() is true only where a push is the text as content, unchanged (the normaliser skips push there)', () => {
    for (const input of [text, 'Plain answer.', '<think>open', '  <thi', 'x<think>y</think>z']) {
      const s = createThinkSplitter();
      let passed = false;
      for (const piece of [...input]) {
        const passing = s.passing();
        passed ||= passing;
        const out = s.push(piece);
        if (passing) expect(out).toEqual([{ type: 'content', text: piece }]);
      }
      // Past the block (or with none), the rest of the text streams through without the splitter.
      expect(passed).toBe(input !== '<think>open' && input !== '  <thi');
    }
  });
  it('one character at a time', () => {
    expect(split([...text])).toEqual({ reasoning: 'K 5.8 is high', content: 'Potassium is high.' });
  });
  it('leaves content without a leading think block alone, including later mentions of <think>', () => {
    expect(split(['The tag <think> means reasoning.'])).toEqual({ reasoning: '', content: 'The tag <think> means reasoning.' });
    expect(split(['<thi', 'nking cap on'])).toEqual({ reasoning: '', content: '<thinking cap on' });
  });
  it('an unclosed block is all reasoning', () => {
    expect(split(['<think>cut off mid', ' thought</thi'])).toEqual({ reasoning: 'cut off mid thought</thi', content: '' });
  });
});

describe('extractJson', () => {
  it.each([
    ['{"a":1}', '{"a":1}'],
    ['```json\n{"a": [1, 2]}\n```', '{"a": [1, 2]}'],
    ['Result: {"text": "a } brace"} done', '{"text": "a } brace"}'],
    ['prefix [1, 2, 3] suffix', '[1, 2, 3]'],
  ])('recovers %j', (input, expected) => expect(extractJson(input)).toBe(expected));
  it.each(['', 'no json', '{"a": ', '{broken}'])('gives up on %j', (input) => expect(extractJson(input)).toBeNull());
});

describe('SSE reader', () => {
  it('handles CRLF, multi-line data, comments and events split across byte chunks', async () => {
    const raw = ': keep-alive\r\n\r\ndata: {"a":\r\ndata: 1}\r\n\r\nevent: x\ndata: [DONE]\n\n';
    const bytes = new TextEncoder().encode(raw);
    async function* chunks() {
      for (let i = 0; i < bytes.length; i += 3) yield bytes.slice(i, i + 3);
    }
    const out: string[] = [];
    for await (const { text, events } of readSse(chunks())) out.push(...eventData(text, events));
    expect(out).toEqual(['{"a":\n1}', '[DONE]']);
  });

  it('lets go of a body that sends [DONE] and then neither ends nor writes, within about a second', async () => {
    let closed = 0;
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"a":1}\n\ndata: [DONE]\n\n'); // and never res.end()
      res.socket!.on('close', () => (closed = Date.now()));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { body } = await request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      const out: string[] = [];
      for await (const { text, events } of readSse(body)) {
        const batch = eventData(text, events);
        out.push(...batch);
        if (batch.includes('[DONE]')) break;
      }
      const stopped = Date.now();
      expect(out).toEqual(['{"a":1}', '[DONE]']);
      await expect.poll(() => closed, { timeout: 3000, interval: 50 }).toBeGreaterThan(0);
      expect(closed - stopped).toBeGreaterThanOrEqual(900);
      expect(closed - stopped).toBeLessThan(2500);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('decodes UTF-8 split at any byte and drops a leading byte order mark, as the SSE spec says', async () => {
    const bytes = new TextEncoder().encode('\uFEFFdata: {"t":"é ✓ 😀"}\n\ndata: ok\n\n');
    expect(bytes[0]).toBe(0xef);
    for (let i = 0; i <= bytes.length; i++) {
      async function* two() {
        yield bytes.slice(0, i);
        yield bytes.slice(i);
      }
      const out: string[] = [];
      for await (const { text, events } of readSse(two())) out.push(...eventData(text, events));
      expect(out, `split at byte ${i}`).toEqual(['{"t":"é ✓ 😀"}', 'ok']);
    }
  });

  it('gives a one-line event as its place in the text and any other as its data, in stream order', () => {
    const text = 'data: {"a":1}\n\ndata:{"b":2}\r\n\r\n: ping\n\ndata: x\ndata: y\n\ndata: [DONE]\n\n';
    const events = createSseParser().push(text);
    expect(events).toEqual([6, 13, '{"b":2}', 'x\ny', 62, 68]);
    expect(eventData(text, events)).toEqual(['{"a":1}', '{"b":2}', 'x\ny', '[DONE]']);
  });

  it('reads the same events whichever two pieces the text arrives in, and a last event without its blank line', () => {
    const raw = ': keep-alive\r\n\r\ndata: {"a":\r\ndata: 1}\r\n\r\nevent: x\ndata: [DONE]\n\ndata:last\r\n';
    for (let i = 0; i <= raw.length; i++) {
      const parser = createSseParser();
      const [a, b] = [raw.slice(0, i), raw.slice(i)];
      expect([...eventData(a, parser.push(a)), ...eventData(b, parser.push(b)), ...parser.end()]).toEqual(['{"a":\n1}', '[DONE]', 'last']);
    }
  });

  it('refuses an event or a line longer than its bound with an UpstreamError; one at the bound passes', () => {
    const parse = (...pieces: string[]) => {
      const parser = createSseParser(16);
      return [...pieces.flatMap((p) => eventData(p, parser.push(p))), ...parser.end()];
    };
    const x = (n: number) => 'x'.repeat(n);
    // The bound is on each line (`data: ` included) and on an event's data lines together.
    expect(parse(`data: ${x(10)}\r\n\r\n`)).toEqual([x(10)]);
    expect(parse('data: ', x(5), x(5), '\n\n')).toEqual([x(10)]);
    expect(parse(`data: ${x(7)}\ndata: ${x(8)}\n\n`)).toEqual([`${x(7)}\n${x(8)}`]);
    for (const pieces of [
      [`data: ${x(11)}\n\n`],
      ['data: ', x(6), x(5)],
      [`data: ${x(8)}\ndata: ${x(8)}\n\n`],
      [`: ${x(10)}`, `${x(10)}\n`],
    ]) {
      expect(() => parse(...pieces)).toThrow(UpstreamError);
      expect(() => parse(...pieces)).toThrow(/oversized stream event/);
    }
  });
});
