// The prompted tool-call mode (issue 9): for upstreams that ignore `tools`, the tools go into the system prompt in
// the Hermes/Qwen format and `<tool_call>` text comes back as tool calls. Unit tests of the streaming parser (tags
// split at every position), the prompt and history rendering, the decorator over a scripted model, and the whole
// server-side FHIR loop through the HTTP gateway with the openai SDK, streamed and not.
import OpenAI from 'openai';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createScriptedUpstream,
  toolCall,
  usage,
  type ScriptedStep,
  type ScriptedUpstream,
} from '../src/agent/testing/scripted-upstream.ts';
import { composeGateway } from '../src/composition/compose-gateway.ts';
import { loadConfig } from '../src/composition/config.ts';
import type { ChatParams, ModelUpstream, UpstreamDelta } from '../src/model/model-upstream.ts';
import type { ChatMessage, FunctionTool } from '../src/vocabulary/openai/chat-request.ts';
import { applyToolMode } from '../src/model/prompted-tools/apply-tool-mode.ts';
import { parseToolCallBlock } from '../src/model/prompted-tools/parse-tool-call-block.ts';
import { createPromptedToolsUpstream } from '../src/model/prompted-tools/prompted-tools-upstream.ts';
import { renderToolPrompt } from '../src/model/prompted-tools/render-tool-prompt.ts';
import { toPromptedParams } from '../src/model/prompted-tools/to-prompted-params.ts';
import { createToolCallTextParser, parseToolCallText, TOOL_CALL_OPEN } from '../src/model/prompted-tools/tool-call-text-parser.ts';
import { generated, streamed, type Collected } from './support/agent-kit.ts';
import { TEST_KEY, TEST_MODEL, type RunningGateway } from './support/gateway-harness.ts';

const FIND = { family: 'Iwasaki', given: 'Farrah', birthdate: '1981-10-21' };
const A1C = { patient: 'S1000002', code: 'http://loinc.org|4548-4' };
const block = (name: string, args: unknown) => `<tool_call>\n{"name": "${name}", "arguments": ${JSON.stringify(args)}}\n</tool_call>`;

/** Feeds the chunks, ends the text, and joins what came out. */
function run(chunks: string[], acceptUnterminated = true) {
  const parser = createToolCallTextParser();
  const pieces = [...chunks.flatMap((c) => parser.push(c)), ...parser.end({ acceptUnterminated })];
  return {
    content: pieces.map((p) => (p.type === 'content' ? p.text : '')).join(''),
    calls: pieces.flatMap((p) => (p.type === 'tool-call' ? [{ name: p.name, arguments: p.arguments }] : [])),
  };
}

/** A naive model of what may be shown after `prefix`: its complete blocks removed, an open block or a possible tag start cut off, ends trimmed. */
function shownAfter(prefix: string): string {
  let t = prefix.replace(/<tool_call>[\s\S]*?<\/tool_call>/g, '');
  const open = t.indexOf(TOOL_CALL_OPEN);
  if (open >= 0) t = t.slice(0, open);
  else {
    for (let n = TOOL_CALL_OPEN.length - 1; n > 0; n--) {
      if (t.endsWith(TOOL_CALL_OPEN.slice(0, n))) {
        t = t.slice(0, -n);
        break;
      }
    }
  }
  return t.trim();
}

const SAMPLE = `Let me check <b>both</b>.\n${block('find_patients', FIND)}\n${block('search_observations', A1C)}\nOne moment, 3 < 4 and x <tool_calls> y.`;
const SAMPLE_RESULT = {
  content: 'Let me check <b>both</b>.\n\n\nOne moment, 3 < 4 and x <tool_calls> y.',
  calls: [
    { name: 'find_patients', arguments: JSON.stringify(FIND) },
    { name: 'search_observations', arguments: JSON.stringify(A1C) },
  ],
};

// Leading whitespace, a call first, a "</tool_call" look-alike inside the JSON, trailing whitespace.
const SAMPLE_2 = `\n ${block('read_resource', { resourceType: 'Patient', id: '</tool_call' })}\n\nAfter  the call.  \n`;
const SAMPLE_2_RESULT = {
  content: 'After  the call.',
  calls: [{ name: 'read_resource', arguments: JSON.stringify({ resourceType: 'Patient', id: '</tool_call' }) }],
};
const SAMPLES: Array<[string, { content: string; calls: Array<{ name: string; arguments: string }> }]> = [
  [SAMPLE, SAMPLE_RESULT],
  [SAMPLE_2, SAMPLE_2_RESULT],
];

describe('tool-call text parser', () => {
  it('whole text: every call extracted in order, text before, between and after kept, ends trimmed', () => {
    expect(run([SAMPLE])).toEqual(SAMPLE_RESULT);
    expect(parseToolCallText(SAMPLE, { acceptUnterminated: true })).toEqual(SAMPLE_RESULT);
  });

  it.each(SAMPLES)(
    'two chunks split at every position give the same result, and each first chunk shows all it safely can (%#)',
    (text, result) => {
      for (let i = 0; i <= text.length; i++) {
        const a = text.slice(0, i);
        const parser = createToolCallTextParser();
        const first = parser.push(a);
        const shown = first.map((p) => (p.type === 'content' ? p.text : '')).join('');
        expect(shown, `split at ${i}`).toBe(shownAfter(a));
        const rest = [...parser.push(text.slice(i)), ...parser.end({ acceptUnterminated: true })];
        const all = [...first, ...rest];
        expect({
          content: all.map((p) => (p.type === 'content' ? p.text : '')).join(''),
          calls: all.flatMap((p) => (p.type === 'tool-call' ? [{ name: p.name, arguments: p.arguments }] : [])),
        }).toEqual(result);
      }
    },
  );

  it.each(SAMPLES)(
    'three chunks split at every pair of positions, and one character at a time, give the same result (%#)',
    (text, result) => {
      for (let i = 0; i <= text.length; i++) {
        for (let j = i; j <= text.length; j++) {
          const got = run([text.slice(0, i), text.slice(i, j), text.slice(j)]);
          // Compared cheaply first: toEqual on every one of the ~30k splits would dominate the run.
          if (got.content !== result.content || JSON.stringify(got.calls) !== JSON.stringify(result.calls)) {
            expect(got, `split at ${i}, ${j}`).toEqual(result);
          }
        }
      }
      expect(run([...text])).toEqual(result);
    },
  );

  it('holds back only a possible start of the opening tag, and only until it is decided', () => {
    const p = createToolCallTextParser();
    expect(p.push('Hello')).toEqual([{ type: 'content', text: 'Hello' }]);
    expect(p.push(' a<')).toEqual([{ type: 'content', text: ' a' }]);
    expect(p.push('b')).toEqual([{ type: 'content', text: '<b' }]);
    expect(p.push(' <to')).toEqual([]); // the space waits for text, "<to" may become the tag
    expect(p.push('ol_c')).toEqual([]);
    expect(p.push('alls>!')).toEqual([{ type: 'content', text: ' <tool_calls>!' }]);
    expect(p.push('<x<to')).toEqual([{ type: 'content', text: '<x' }]);
    expect(p.push('ol_call>{"name": "a", "argu')).toEqual([]);
    expect(p.push('ments": {}}</tool_')).toEqual([]);
    expect(p.push('call>done')).toEqual([
      { type: 'tool-call', name: 'a', arguments: '{}' },
      { type: 'content', text: 'done' },
    ]);
    expect(p.end({ acceptUnterminated: true })).toEqual([]);
  });

  it('content that is only calls and whitespace is null; text with no call is untouched but trimmed', () => {
    expect(parseToolCallText(`\n${block('a', {})}\n\n${block('b', { x: 1 })}\n`, { acceptUnterminated: true })).toEqual({
      content: null,
      calls: [
        { name: 'a', arguments: '{}' },
        { name: 'b', arguments: '{"x":1}' },
      ],
    });
    expect(parseToolCallText('  plain answer, 1 < 2\n', { acceptUnterminated: true })).toEqual({
      content: 'plain answer, 1 < 2',
      calls: [],
    });
  });

  it('malformed JSON with a readable name becomes a call whose arguments are the raw text, so the loop reports it', () => {
    const bad = '{"name": "find_patients", "arguments": {"family": "Iwasaki",}}';
    const text = `Looking.\n<tool_call>\n${bad}\n</tool_call>`;
    for (let i = 0; i <= text.length; i++) {
      const got = run([text.slice(0, i), text.slice(i)]);
      expect(got).toEqual({ content: 'Looking.', calls: [{ name: 'find_patients', arguments: bad }] });
    }
    expect(() => JSON.parse(bad)).toThrow();
  });

  it('a block without a readable name stays content, verbatim', () => {
    expect(run(['a <tool_call>not json at all</tool_call> b'])).toEqual({
      content: 'a <tool_call>not json at all</tool_call> b',
      calls: [],
    });
    expect(run(['<tool_call>{"arguments": {}}</tool_call>'])).toEqual({ content: '<tool_call>{"arguments": {}}</tool_call>', calls: [] });
    expect(run(['<tool_call>["a"]</tool_call>'])).toEqual({ content: '<tool_call>["a"]</tool_call>', calls: [] });
  });

  it('an unterminated final block is a call when generation ended and its JSON parses; otherwise content', () => {
    const open = `Sure.\n<tool_call>\n{"name": "read_resource", "arguments": {"resourceType": "Patient", "id": "S1000002"}}\n`;
    const call = { name: 'read_resource', arguments: '{"resourceType":"Patient","id":"S1000002"}' };
    for (let i = 0; i <= open.length; i++) {
      expect(run([open.slice(0, i), open.slice(i)], true), `split at ${i}`).toEqual({ content: 'Sure.', calls: [call] });
    }
    expect(run([open], false)).toEqual({ content: open.trim(), calls: [] });
    const cut = 'Sure.\n<tool_call>\n{"name": "read_resource", "arguments": {"resourceType": "Pat';
    expect(run([cut], true)).toEqual({ content: cut, calls: [] });
    expect(run(['x <tool_ca'], true)).toEqual({ content: 'x <tool_ca', calls: [] });
  });

  it('block JSON: `parameters` and double-encoded string arguments are accepted; missing arguments are {}', () => {
    expect(parseToolCallBlock('{"name": "a", "parameters": {"q": 1}}', { lenient: false })).toEqual({ name: 'a', arguments: '{"q":1}' });
    expect(parseToolCallBlock('{"name": "a", "arguments": "{\\"q\\": 1}"}', { lenient: false })).toEqual({
      name: 'a',
      arguments: '{"q": 1}',
    });
    expect(parseToolCallBlock(' {"name": "a"} ', { lenient: false })).toEqual({ name: 'a', arguments: '{}' });
    expect(parseToolCallBlock("{'name': 'a', 'arguments': {}}", { lenient: false })).toBeNull();
    expect(parseToolCallBlock("{'name': 'a', 'arguments': {}}", { lenient: true })).toEqual({
      name: 'a',
      arguments: "{'name': 'a', 'arguments': {}}",
    });
  });
});

const TOOLS: FunctionTool[] = [
  {
    type: 'function',
    function: {
      name: 'find_patients',
      description: 'Find patients by name — and birth date.',
      parameters: {
        type: 'object',
        properties: { family: { type: 'string' }, birthdate: { type: 'string', format: 'date' } },
        required: ['family'],
      },
      strict: true,
    },
  },
  { type: 'function', function: { name: 'read_resource', parameters: { type: 'object', properties: {} } } },
];

const params = (messages: ChatMessage[], extra: Partial<ChatParams> = {}): ChatParams => ({
  messages,
  maxTokens: 256,
  temperature: 0,
  thinking: { type: 'disabled', keep: null },
  ...extra,
});

describe('tool prompt and history rendering', () => {
  it('renders the Qwen tools section: one JSON signature per line inside <tools>, then the <tool_call> format', () => {
    const prompt = renderToolPrompt({ tools: TOOLS });
    const lines = prompt.split('\n');
    expect(lines.slice(0, 5)).toEqual([
      '# Tools',
      '',
      'You may call one or more functions to assist with the user query.',
      '',
      'You are provided with function signatures within <tools></tools> XML tags:',
    ]);
    const open = lines.indexOf('<tools>');
    const close = lines.indexOf('</tools>');
    expect(close - open - 1).toBe(TOOLS.length);
    const signatures = lines.slice(open + 1, close);
    expect(signatures.map((l) => JSON.parse(l))).toEqual(
      TOOLS.map((t) => ({
        type: 'function',
        function: { name: t.function.name, description: t.function.description, parameters: t.function.parameters },
      })),
    );
    // Python's json.dumps spacing, as the chat template's `tojson` prints it; non-ASCII kept.
    expect(signatures[0]).toMatch(
      /^\{"type": "function", "function": \{"name": "find_patients", "description": "Find patients by name — and birth date.", /,
    );
    expect(signatures[0]).toContain('"required": ["family"]');
    expect(signatures.join('')).not.toContain('strict');
    expect(lines.slice(close + 1)).toEqual([
      '',
      'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:',
      '<tool_call>',
      '{"name": <function-name>, "arguments": <args-json-object>}',
      '</tool_call>',
    ]);
  });

  it('tool_choice required or a named function adds an instruction after the format', () => {
    expect(renderToolPrompt({ tools: TOOLS, toolChoice: 'auto' })).toBe(renderToolPrompt({ tools: TOOLS }));
    expect(renderToolPrompt({ tools: TOOLS, toolChoice: 'required' })).toMatch(
      /<\/tool_call>\n\nYou must call at least one function in this reply\.$/,
    );
    expect(renderToolPrompt({ tools: TOOLS, toolChoice: { type: 'function', function: { name: 'read_resource' } } })).toMatch(
      /<\/tool_call>\n\nYou must call the function "read_resource" in this reply\.$/,
    );
  });

  it('tools and tool_choice leave the request; the prompt joins the system message, or becomes one', () => {
    const prompt = renderToolPrompt({ tools: TOOLS, toolChoice: 'required' });
    const added = toPromptedParams(params([{ role: 'user', content: 'hi' }], { tools: TOOLS, toolChoice: 'required' }));
    expect(added.parseToolCalls).toBe(true);
    expect(added.params).not.toHaveProperty('tools');
    expect(added.params).not.toHaveProperty('toolChoice');
    expect(added.params.messages).toEqual([
      { role: 'system', content: prompt },
      { role: 'user', content: 'hi' },
    ]);
    const joined = toPromptedParams(
      params(
        [
          { role: 'system', content: 'You are careful.' },
          { role: 'user', content: 'hi' },
        ],
        { tools: TOOLS },
      ),
    );
    expect(joined.params.messages[0]).toEqual({ role: 'system', content: `You are careful.\n\n${renderToolPrompt({ tools: TOOLS })}` });
    const developer = toPromptedParams(params([{ role: 'developer', content: [{ type: 'text', text: 'Be brief.' }] }], { tools: TOOLS }));
    expect(developer.params.messages).toEqual([
      {
        role: 'developer',
        content: [
          { type: 'text', text: 'Be brief.' },
          { type: 'text', text: `\n\n${renderToolPrompt({ tools: TOOLS })}` },
        ],
      },
    ]);
  });

  it('no tools: the params are passed on as they are; tool_choice none: no prompt and no parsing', () => {
    const plain = params([{ role: 'user', content: 'hi' }]);
    expect(toPromptedParams(plain)).toEqual({ params: plain, parseToolCalls: false });
    expect(toPromptedParams(plain).params).toBe(plain);
    const none = toPromptedParams(params([{ role: 'user', content: 'hi' }], { tools: TOOLS, toolChoice: 'none' }));
    expect(none).toEqual({ params: params([{ role: 'user', content: 'hi' }]), parseToolCalls: false });
  });

  it('history: calls become <tool_call> text of the assistant turn; consecutive tool results one user message of <tool_response>s', () => {
    const history: ChatMessage[] = [
      { role: 'user', content: 'Find her and her HbA1c.' },
      {
        role: 'assistant',
        content: 'Looking.',
        reasoning_content: 'Two lookups.',
        tool_calls: [toolCall('c1', 'find_patients', FIND), toolCall('c2', 'search_observations', A1C)],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"ok":true}' },
      {
        role: 'tool',
        tool_call_id: 'c2',
        content: [
          { type: 'text', text: 'line 1\n' },
          { type: 'text', text: 'line 2' },
        ],
      },
      { role: 'assistant', content: null, tool_calls: [toolCall('c3', 'read_resource', '{"id": "S1000002",')] },
      { role: 'tool', tool_call_id: 'c3', content: 'invalid' },
      { role: 'user', content: 'Thanks.' },
    ];
    const out = toPromptedParams(params(history, { tools: TOOLS })).params.messages;
    expect(out.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user', 'user']);
    expect(out[2]).toEqual({
      role: 'assistant',
      reasoning_content: 'Two lookups.',
      content:
        'Looking.\n' +
        '<tool_call>\n{"name": "find_patients", "arguments": {"family": "Iwasaki", "given": "Farrah", "birthdate": "1981-10-21"}}\n</tool_call>\n' +
        '<tool_call>\n{"name": "search_observations", "arguments": {"patient": "S1000002", "code": "http://loinc.org|4548-4"}}\n</tool_call>',
    });
    expect(out[3]).toEqual({
      role: 'user',
      content: '<tool_response>\n{"ok":true}\n</tool_response>\n<tool_response>\nline 1\nline 2\n</tool_response>',
    });
    // Arguments that are not JSON go back as a JSON string, so the block the model reads stays JSON.
    expect(out[4]).toEqual({
      role: 'assistant',
      content: '<tool_call>\n{"name": "read_resource", "arguments": "{\\"id\\": \\"S1000002\\","}\n</tool_call>',
    });
    expect(out[5]).toEqual({ role: 'user', content: '<tool_response>\ninvalid\n</tool_response>' });
    expect(out[6]).toEqual({ role: 'user', content: 'Thanks.' });
    expect(out.some((m) => m.role === 'tool' || 'tool_calls' in m)).toBe(false);
    // With no tools offered the history is still rewritten, without a tools section.
    const later = toPromptedParams(params(history)).params.messages;
    expect(later.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'user']);
  });
});

const counter = () => {
  let n = 0;
  return () => String(++n);
};

async function collect(stream: AsyncIterable<UpstreamDelta>): Promise<UpstreamDelta[]> {
  const out: UpstreamDelta[] = [];
  for await (const d of stream) out.push(d);
  return out;
}

describe('prompted tools upstream (scripted model)', () => {
  const reply = { reasoning: 'Need her record.', content: `I will look.\n${block('find_patients', FIND)}`, usage: usage(50, 20) };

  it('doGenerate: the model gets no tools but the prompt; its <tool_call> text comes back as tool calls', async () => {
    const inner = createScriptedUpstream([reply]);
    const upstream = createPromptedToolsUpstream({ upstream: inner, generateId: counter() });
    const out = await upstream.doGenerate(params([{ role: 'user', content: 'MRN?' }], { tools: TOOLS }));
    expect(out).toEqual({
      content: 'I will look.',
      reasoning: 'Need her record.',
      toolCalls: [toolCall('call_1', 'find_patients', FIND)],
      finishReason: 'tool_calls',
      usage: usage(50, 20),
    });
    const sent = inner.calls[0]!.params;
    expect(sent.tools).toBeUndefined();
    expect(sent.messages[0]).toMatchObject({
      role: 'system',
      content: expect.stringContaining('<tools>\n{"type": "function", "function": {"name": "find_patients"'),
    });
  });

  it('doStream: content streams, calls become tool-call deltas, reasoning and usage pass through, finish is tool_calls', async () => {
    const inner = createScriptedUpstream([reply]); // content arrives in 4-character chunks: the tags are split
    const upstream = createPromptedToolsUpstream({ upstream: inner, generateId: counter() });
    const deltas = await collect(await upstream.doStream(params([{ role: 'user', content: 'MRN?' }], { tools: TOOLS })));
    const reasoning = deltas.filter((d) => d.type === 'reasoning');
    expect(reasoning.map((d) => d.text).join('')).toBe('Need her record.');
    expect(deltas.indexOf(reasoning[0]!)).toBe(0);
    expect(deltas.flatMap((d) => (d.type === 'content' ? [d.text] : [])).join('')).toBe('I will look.');
    expect(deltas.slice(-4)).toEqual([
      { type: 'tool-call-start', index: 0, id: 'call_1', name: 'find_patients' },
      { type: 'tool-call-args', index: 0, text: JSON.stringify(FIND) },
      { type: 'finish', finishReason: 'tool_calls' },
      { type: 'usage', usage: usage(50, 20) },
    ]);
    expect(inner.calls[0]!.params.tools).toBeUndefined();
  });

  it('several calls stream with consecutive indexes; an unterminated last block counts when generation stopped', async () => {
    const content = `${block('find_patients', FIND)}\n<tool_call>\n{"name": "search_observations", "arguments": ${JSON.stringify(A1C)}}`;
    const upstream = createPromptedToolsUpstream({ upstream: createScriptedUpstream([{ content }]), generateId: counter() });
    const deltas = await collect(await upstream.doStream(params([{ role: 'user', content: 'go' }], { tools: TOOLS })));
    expect(deltas).toEqual([
      { type: 'tool-call-start', index: 0, id: 'call_1', name: 'find_patients' },
      { type: 'tool-call-args', index: 0, text: JSON.stringify(FIND) },
      { type: 'tool-call-start', index: 1, id: 'call_2', name: 'search_observations' },
      { type: 'tool-call-args', index: 1, text: JSON.stringify(A1C) },
      { type: 'finish', finishReason: 'tool_calls' },
    ]);
    const filtered = createPromptedToolsUpstream({
      upstream: createScriptedUpstream([{ content, finishReason: 'content_filter' }]),
      generateId: counter(),
    });
    const out = await filtered.doGenerate(params([{ role: 'user', content: 'go' }], { tools: TOOLS }));
    expect(out.toolCalls.map((c) => c.function.name)).toEqual(['find_patients']);
    expect(out.content).toMatch(/^<tool_call>\n\{"name": "search_observations"/);
  });

  it('without tools it is a pass-through, and applyToolMode("native") leaves the upstream alone', async () => {
    const text = `Quoting: ${block('x', {})}`;
    const inner = createScriptedUpstream([{ content: text }]);
    const upstream = applyToolMode(inner, 'prompted');
    const p = params([{ role: 'user', content: 'hi' }]);
    expect((await upstream.doGenerate(p)).content).toBe(text);
    expect(inner.calls[0]!.params).toBe(p);
    const deltas = await collect(await upstream.doStream(p));
    expect(deltas.flatMap((d) => (d.type === 'content' ? [d.text] : [])).join('')).toBe(text);
    expect(applyToolMode(inner, 'native')).toBe(inner);
  });

  it('applyToolMode("auto") prompts only the flavours known to ignore tools', () => {
    const inner = createScriptedUpstream([{ content: 'x' }]); // flavour "openai"
    expect(applyToolMode(inner, 'auto')).toBe(inner);
    const toolless = { ...inner, flavour: 'llama-cpp-python' } as unknown as ModelUpstream;
    expect(applyToolMode(toolless, 'auto')).not.toBe(toolless);
    expect(applyToolMode(toolless, 'auto').flavour).toBe('llama-cpp-python');
    expect(applyToolMode(toolless, 'native')).toBe(toolless);
  });
});

// The whole loop: openai SDK → gateway (real HTTP) → agent loop → prompted tools → scripted model, with the FHIR
// tools against the seeded embedded server. The gateway comes from the composition root; only the model is scripted.
describe.each(['create', 'stream'] as const)('server-side FHIR loop over prompted tool calls (%s)', (mode) => {
  let gw: RunningGateway;
  let scripted: ScriptedUpstream;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const config = loadConfig({
      HOST: '127.0.0.1',
      PORT: '0',
      API_KEYS: TEST_KEY,
      MODEL_ID: TEST_MODEL,
      FHIR_SEED: 'true',
      UPSTREAM_TOOL_MODE: 'prompted',
      LOG_LEVEL: 'silent',
      AUDIT_SINK: 'off',
    });
    const model: ModelUpstream = {
      flavour: 'openai',
      model: 'scripted',
      doGenerate: (p, o) => scripted.doGenerate(p, o),
      doStream: (p, o) => scripted.doStream(p, o),
    };
    const gateway = await composeGateway({ config, logger: pino({ level: 'silent' }), model });
    const baseUrl = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
    const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: TEST_KEY, maxRetries: 0, timeout: 20_000 });
    // agent-kit's generated/streamed use only the client and the model id.
    gw = {
      baseUrl,
      apiKey: TEST_KEY,
      model: TEST_MODEL,
      client,
      fhirServer: gateway.fhirServer,
      logs: [],
    } as unknown as RunningGateway;
    close = gateway.close;
  });
  afterAll(() => close?.());

  async function ask(steps: ScriptedStep[], question: string): Promise<{ res: any; stream?: Collected }> {
    scripted = createScriptedUpstream(steps);
    const body = { messages: [{ role: 'user', content: question }] };
    if (mode === 'create') return { res: await generated(gw, body) };
    const stream = await streamed(gw, { ...body, stream_options: { include_usage: true } });
    return { res: stream.final, stream };
  }

  it('a <tool_call> in the model text runs find_patients server-side; the result goes back as <tool_response>', async () => {
    const { res, stream } = await ask(
      [
        { content: `I will look her up.\n${block('find_patients', FIND)}`, usage: usage(300, 30) },
        { content: 'Farrah N Iwasaki has MRN S1000002.', usage: usage(500, 12) },
      ],
      'What is the MRN of Farrah Iwasaki, born 1981-10-21?',
    );

    // What the model saw: no `tools`, the tools section in the system prompt, then its call and the real result as text.
    expect(scripted.calls).toHaveLength(2);
    expect(scripted.calls.map((c) => c.stream)).toEqual(mode === 'stream' ? [true, true] : [false, false]);
    const [first, second] = scripted.calls.map((c) => c.params);
    expect(first!.tools).toBeUndefined();
    expect(first!.toolChoice).toBeUndefined();
    expect(first!.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(first!.messages[0]!.content).toContain('"name": "find_patients"');
    expect(first!.messages[0]!.content).toContain('<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>');
    expect(second!.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(second!.messages[2]!.content).toBe(
      'I will look her up.\n<tool_call>\n{"name": "find_patients", "arguments": {"family": "Iwasaki", "given": "Farrah", "birthdate": "1981-10-21"}}\n</tool_call>',
    );
    const response = second!.messages[3]!.content as string;
    expect(response).toMatch(/^<tool_response>\n\{"ok":true,.*\n<\/tool_response>$/s);
    expect(JSON.parse(response.slice('<tool_response>\n'.length, -'\n</tool_response>'.length))).toMatchObject({
      ok: true,
      content: { returned: 1, results: [{ resourceType: 'Patient', id: 'S1000002', name: 'Farrah N Iwasaki' }] },
    });

    // What the client got: the answer, no tags, and the audit of a real FHIR search.
    const choice = res.choices[0];
    expect(choice.finish_reason).toBe('stop');
    expect(choice.message.content).toBe('I will look her up.\n\nFarrah N Iwasaki has MRN S1000002.');
    expect(choice.message.tool_calls ?? []).toEqual([]);
    expect(res.usage).toMatchObject({ prompt_tokens: 800, completion_tokens: 42 });
    const audit = res.fhir_agent;
    expect(audit.stop_reason).toBe('final');
    expect(audit.steps.map((s: any) => [s.index, s.finish_reason, s.tool_calls])).toEqual([
      [0, 'tool_calls', 1],
      [1, 'stop', 0],
    ]);
    expect(audit.tool_calls).toHaveLength(1);
    expect(audit.tool_calls[0]).toMatchObject({
      name: 'find_patients',
      step: 0,
      ok: true,
      arguments: JSON.stringify(FIND),
      id: expect.stringMatching(/^call_/),
    });
    expect(audit.tool_calls[0].fhir_requests).toEqual([
      expect.objectContaining({ method: 'GET', status: 200, url: expect.stringContaining('/Patient?') }),
    ]);
    if (stream) {
      expect(stream.content).toBe('I will look her up.\n\nFarrah N Iwasaki has MRN S1000002.');
      expect(stream.content).not.toContain('tool_call');
      expect(stream.events.map((e) => e.event)).toEqual(['tool_call', 'tool_result', 'done']);
      expect(stream.events[0]).toMatchObject({ event: 'tool_call', step: 0, name: 'find_patients', arguments: JSON.stringify(FIND) });
    }
  });

  it('a malformed <tool_call> goes back to the model as invalid_arguments, and the model recovers', async () => {
    const bad = '{"name": "find_patients", "arguments": {"family": "Iwasaki", "given": "Farrah",}}';
    const { res } = await ask(
      [{ content: `<tool_call>\n${bad}\n</tool_call>` }, { content: block('find_patients', FIND) }, { content: 'S1000002.' }],
      'MRN of Farrah Iwasaki?',
    );
    expect(scripted.calls).toHaveLength(3);
    const retry = scripted.calls[1]!.params.messages;
    expect(retry[3]).toMatchObject({
      role: 'user',
      content: expect.stringMatching(/^<tool_response>\n.*"invalid_arguments".*not valid JSON/s),
    });
    expect(res.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'S1000002.' } });
    expect(res.fhir_agent.tool_calls.map((t: any) => [t.name, t.step, t.ok, t.error?.code])).toEqual([
      ['find_patients', 0, false, 'invalid_arguments'],
      ['find_patients', 1, true, undefined],
    ]);
    expect(res.fhir_agent.tool_calls[0].arguments).toBe(bad);
  });
});
