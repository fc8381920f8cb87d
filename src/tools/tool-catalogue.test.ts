// The catalogue an added tool joins: checked like a built-in (schema, write gate), refused on a name clash or a
// malformed definition, a throw reported with an id and kept from the caller, a result held to the token budget.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FhirError } from '../fhir/client/fhir-client.ts';
import { chatRequestSchema, TOOL_NAME_PATTERN } from '../vocabulary/openai/chat-request.ts';
import { createToolCatalogue, ToolCatalogueError } from './tool-catalogue.ts';
import { defineTool, type ToolContext } from './kit/tool.ts';

const ctx = { fhir: {} as ToolContext['fhir'], now: () => new Date(0), writesEnabled: false, callId: 'c1' } satisfies ToolContext;

const echo = defineTool({
  name: 'echo',
  description: 'Echoes its text.',
  inputSchema: z.object({ text: z.string().max(10_000), note: z.string().optional() }),
  write: false,
  execute: async ({ text }) => ({ ok: true, content: { text } }),
});

describe('createToolCatalogue', () => {
  it('adds tools after the built-ins, offered and run like them', async () => {
    const catalogue = createToolCatalogue({ tools: [echo] });
    expect([...catalogue.registry.keys()].at(-1)).toBe('echo');
    expect(catalogue.definitions({ writesEnabled: false }).map((d) => d.function.name)).toContain('echo');
    expect(await catalogue.execute('echo', '{"text":"hi","note":null}', ctx)).toEqual({ ok: true, content: { text: 'hi' } });
    expect(await catalogue.execute('echo', '{"txt":"hi"}', ctx)).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
  });

  it('gates an added write tool like a built-in one', async () => {
    const catalogue = createToolCatalogue({ tools: [{ ...echo, name: 'echo_write', write: true }] });
    expect(catalogue.definitions({ writesEnabled: false }).map((d) => d.function.name)).not.toContain('echo_write');
    expect(await catalogue.execute('echo_write', '{"text":"hi"}', ctx)).toMatchObject({ ok: false, error: { code: 'writes_disabled' } });
  });

  it('refuses a name already taken, or something that is not a tool, naming it', () => {
    expect(() => createToolCatalogue({ tools: [{ ...echo, name: 'find_patients' }] })).toThrow(
      new ToolCatalogueError('tool "find_patients" is already defined (a built-in tool)'),
    );
    expect(() => createToolCatalogue({ tools: [echo, echo] })).toThrow('tool "echo" is already defined');
    expect(() => createToolCatalogue({ tools: [{ ...echo, inputSchema: { type: 'object' } }] })).toThrow(
      'tool "echo": inputSchema must be a zod object',
    );
    expect(() => createToolCatalogue({ tools: [{ ...echo, name: 'has space' }] })).toThrow('name must match');
  });

  it('a tool that throws: internal_error with an id for the caller, the error itself to onError only', async () => {
    const reported: Array<{ err: unknown; errorId: string }> = [];
    const boom = defineTool({
      ...echo,
      name: 'boom',
      execute: async () => {
        throw new Error('secret sk-live-123 leaked');
      },
    });
    const catalogue = createToolCatalogue({ tools: [boom], onError: (err, { errorId }) => reported.push({ err, errorId }) });
    const result = await catalogue.execute('boom', '{"text":"x"}', ctx);
    expect(result).toMatchObject({ ok: false, error: { code: 'internal_error', details: { error_id: reported[0]!.errorId } } });
    expect(JSON.stringify(result)).not.toContain('sk-live');
    expect((reported[0]!.err as Error).message).toBe('secret sk-live-123 leaked');
  });

  it("holds an added tool's name to the pattern a chat request's tools are held to (one definition)", () => {
    for (const name of ['has space', 'x'.repeat(65), 'dose.mg', '']) {
      expect(() => createToolCatalogue({ tools: [{ ...echo, name }] }), name).toThrow(`name must match ${TOOL_NAME_PATTERN.source}`);
      const request = { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name } }] };
      expect(chatRequestSchema.safeParse(request).success, name).toBe(false);
    }
  });

  it("holds an added tool's result to the token budget", async () => {
    const catalogue = createToolCatalogue({ tools: [echo] });
    const big = JSON.stringify({ text: 'x'.repeat(3000) });
    expect(await catalogue.execute('echo', big, { ...ctx, resultMaxTokens: 2000 })).toMatchObject({ ok: true });
    const refused = await catalogue.execute('echo', big, { ...ctx, resultMaxTokens: 100 });
    expect(refused).toMatchObject({
      ok: false,
      error: { code: 'internal_error', message: expect.stringContaining('TOOL_RESULT_MAX_TOKENS') },
    });
  });

  describe("a built-in tool's failure (issue 29 review)", () => {
    /** A FHIR client every request of which fails with `err`. */
    const failingFhir = (err: unknown) =>
      new Proxy({ baseUrl: 'http://fhir.test/fhir' }, { get: (t, k) => (k in t ? t[k as 'baseUrl'] : () => Promise.reject(err)) });
    const calls: Array<[string, string]> = [
      ['find_patients', '{"name":"Peter"}'],
      ['read_resource', '{"resourceType":"Patient","id":"p1"}'],
      ['find_codes', '{"resourceType":"Observation","text":"potassium"}'],
      ['record_observation', '{"patient":"p1","code_text":"pain","value_string":"mild"}'],
    ];

    it('unexpected: internal_error with an id for the caller, the error itself to onError only', async () => {
      for (const [name, args] of calls) {
        const reported: Array<{ err: unknown; tool: string; errorId: string }> = [];
        const catalogue = createToolCatalogue({ onError: (err, facts) => reported.push({ err, ...facts }) });
        const bug = new TypeError('cannot read sk-live-123 of undefined');
        const result = await catalogue.execute(name, args, {
          ...ctx,
          fhir: failingFhir(bug) as unknown as ToolContext['fhir'],
          writesEnabled: true,
        });
        expect(
          reported.map((r) => [r.tool, r.err]),
          name,
        ).toEqual([[name, bug]]);
        expect(result, name).toMatchObject({ ok: false, error: { code: 'internal_error', details: { error_id: reported[0]!.errorId } } });
        expect(JSON.stringify(result), name).not.toContain('sk-live');
      }
    });

    it('expected: what the FHIR server said about a refused request, and no report', async () => {
      const refused = new FhirError('HTTP 400', 400, {
        resourceType: 'OperationOutcome',
        issue: [{ severity: 'error', code: 'invalid', diagnostics: 'unknown search parameter "nam"' }],
      });
      for (const [name, args] of calls) {
        const reported: unknown[] = [];
        const catalogue = createToolCatalogue({ onError: (err) => reported.push(err) });
        const result = await catalogue.execute(name, args, {
          ...ctx,
          fhir: failingFhir(refused) as unknown as ToolContext['fhir'],
          writesEnabled: true,
        });
        expect(reported, name).toEqual([]);
        expect(result, name).toEqual({ ok: false, error: { code: 'fhir_error', message: 'unknown search parameter "nam"', status: 400 } });
      }
    });
  });
});
