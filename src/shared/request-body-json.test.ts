// A kept tool list is spliced into a body as JSON.stringify would write it, and written only once.
import { describe, expect, it } from 'vitest';
import { keepToolsJson, stringifyRequestBody } from './request-body-json.ts';

const tool = (name: string, description: string) => ({
  type: 'function',
  function: { name, description, parameters: { type: 'object', properties: { q: { type: 'string', description } } } },
});

describe('stringifyRequestBody', () => {
  it('gives JSON.stringify’s text, kept list or not, whatever the strings hold', () => {
    const tools = [tool('search_observations', 'Newest first — "quoted", $& $1 $$, ≤ 5 %, \u0000'), tool('read', '')];
    const odd = 'tools":"\u0000tools: $& "tools":[] ';
    const bodies = [
      { model: 'm', messages: [{ role: 'user', content: odd }], temperature: 0, tools, tool_choice: 'auto', stream: true },
      { model: 'm', messages: [], tools },
      { tools, model: 'm', response_format: { type: 'json_schema', json_schema: { name: odd } } },
    ];
    const before = bodies.map((b) => JSON.stringify(b));
    keepToolsJson(tools);
    expect(bodies.map(stringifyRequestBody)).toEqual(before);
    expect(stringifyRequestBody({ model: 'm', tools: [tool('other', 'x')] })).toBe(
      JSON.stringify({ model: 'm', tools: [tool('other', 'x')] }),
    );
    expect(stringifyRequestBody({ model: 'm' })).toBe('{"model":"m"}');
  });

  it('writes a kept list once, however many bodies carry it', () => {
    let reads = 0;
    const tools = [
      {
        type: 'function',
        function: {
          get name() {
            reads++;
            return 'counted';
          },
        },
      },
    ];
    keepToolsJson(tools);
    keepToolsJson(tools);
    for (let i = 0; i < 3; i++)
      expect(stringifyRequestBody({ model: 'm', messages: [], tools })).toBe(
        '{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"counted"}}]}',
      );
    expect(reads).toBe(1);
  });
});
