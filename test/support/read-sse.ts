// A streamed chat reply read as its raw SSE text: the data of each event, the content its deltas carry, and whether
// it ended in `[DONE]`. For tests that check the wire, where the SDK would hide a missing `[DONE]`.

export interface ReadSse {
  /** The data of every `data:` event, in order. */
  events: string[];
  /** Choice 0's content deltas, joined. */
  content: string;
  last: string;
  done: boolean;
}

export function readSse(text: string): ReadSse {
  const events = text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6));
  const content = events
    .filter((e) => e !== '[DONE]')
    .map((e) => JSON.parse(e) as { choices?: Array<{ delta?: { content?: string } }> })
    .map((c) => c.choices?.[0]?.delta?.content ?? '')
    .join('');
  return { events, content, last: events.at(-1) ?? '', done: events.at(-1) === '[DONE]' };
}
