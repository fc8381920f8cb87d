// The one exporter's dialects, and the openai-strict one held to the rules OpenAI documents for strict mode
// (platform.openai.com/docs/guides/structured-outputs, "Supported schemas"), checked by a checker written from them.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { createEmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';
import { executeTool, toolJsonSchema, toolRegistry, toolsByName, type JsonSchema } from '../src/tools/index.ts';
import { STRICT_FORMATS } from '../src/tools/kit/tool-json-schema.ts';

/** Keywords the documentation lists as supported, by where they may appear. */
const STRUCTURAL = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  '$ref',
  '$defs',
  'description',
  'title',
]);
const BY_TYPE: Record<string, string[]> = {
  string: ['pattern', 'format'],
  number: ['multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum'],
  integer: ['multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum'],
  array: ['minItems', 'maxItems'],
};

/** Every violation of the documented strict-mode rules, as `path: rule`. */
function strictViolations(root: JsonSchema): string[] {
  const out: string[] = [];
  let properties = 0;
  let enumValues = 0;
  if (root.type !== 'object') out.push('(root): the root must be an object');
  if (root.anyOf) out.push('(root): the root must not be anyOf');
  const visit = (node: JsonSchema, path: string, depth: number) => {
    if (depth > 10) out.push(`${path}: more than 10 levels of nesting`);
    const types = ([] as unknown[]).concat(node.type ?? []).map(String);
    for (const key of Object.keys(node)) {
      const allowed = STRUCTURAL.has(key) || types.some((t) => BY_TYPE[t]?.includes(key));
      if (!allowed) out.push(`${path}: keyword "${key}" is not supported`);
    }
    if (typeof node.format === 'string' && !STRICT_FORMATS.has(node.format)) out.push(`${path}: format "${node.format}" is not supported`);
    if (Array.isArray(node.enum)) enumValues += node.enum.length;
    if (types.includes('object') || node.properties) {
      const props = (node.properties ?? {}) as Record<string, JsonSchema>;
      properties += Object.keys(props).length;
      if (node.additionalProperties !== false) out.push(`${path}: additionalProperties must be false`);
      const required = new Set((node.required as string[] | undefined) ?? []);
      for (const name of Object.keys(props)) if (!required.has(name)) out.push(`${path}.${name}: every property must be required`);
      for (const [name, p] of Object.entries(props)) visit(p, `${path}.${name}`, depth + 1);
    }
    if (node.items && typeof node.items === 'object') visit(node.items as JsonSchema, `${path}[]`, depth + 1);
    for (const [i, branch] of ((node.anyOf as JsonSchema[] | undefined) ?? []).entries()) visit(branch, `${path}|${i}`, depth);
    for (const [name, def] of Object.entries((node.$defs ?? {}) as Record<string, JsonSchema>)) visit(def, `$defs.${name}`, 1);
  };
  visit(root, '(root)', 1);
  if (properties > 5000) out.push(`more than 5000 properties (${properties})`);
  if (enumValues > 1000) out.push(`more than 1000 enum values (${enumValues})`);
  return out;
}

describe('openai-strict', () => {
  it('the checker catches what strict mode refuses (so a pass below means something)', () => {
    const loose = toolJsonSchema(z.object({ a: z.string().min(2).optional(), b: z.object({ c: z.number() }) }));
    const found = strictViolations(loose);
    expect(found).toEqual(
      expect.arrayContaining([
        '(root): additionalProperties must be false',
        '(root).a: every property must be required',
        '(root).a: keyword "minLength" is not supported',
        '(root): keyword "$schema" is not supported',
      ]),
    );
  });

  it('every built-in tool input passes the documented rules', () => {
    for (const tool of toolRegistry.values()) {
      expect(strictViolations(toolJsonSchema(tool.inputSchema, { dialect: 'openai-strict' })), tool.name).toEqual([]);
    }
  });

  it('optionals are required and nullable; a null is taken as left out when the tool runs', async () => {
    const schema = toolJsonSchema(toolsByName.find_patients.inputSchema, { dialect: 'openai-strict' });
    const props = schema.properties as Record<string, JsonSchema>;
    expect(props.name.type).toEqual(['string', 'null']);
    expect(props.gender.enum).toContain(null);
    // What a strict-mode model sends: every field, the unused ones null. Ajv agrees it fits; the tool runs it.
    const call = {
      name: 'Iwasaki',
      family: null,
      given: null,
      birthdate: null,
      identifier: null,
      gender: null,
      count: null,
      raw: null,
      continuation: null,
    };
    expect(new Ajv2020({ strict: false }).validate(schema, call)).toBe(true);
    const server = await createEmbeddedFhirServer();
    await server.loadBundles([
      {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          { resource: { resourceType: 'Patient', id: 'p1', name: [{ family: 'Iwasaki' }] }, request: { method: 'PUT', url: 'Patient/p1' } },
        ],
      },
    ]);
    const fhir = createMedplumFhirClient({ baseUrl: server.baseUrl, fetch: server.fetch, retries: 0 });
    const result = await executeTool('find_patients', JSON.stringify(call), {
      fhir,
      now: () => new Date(),
      writesEnabled: false,
      callId: 'c',
    });
    expect(result, JSON.stringify(result)).toMatchObject({ ok: true, content: { returned: 1, results: [{ id: 'p1' }] } });
  });
});

describe('the other dialects', () => {
  it('draft 2020-12 by default, the input view: a field with a default is not required', () => {
    const schema = toolJsonSchema(z.object({ a: z.string(), count: z.number().default(10) }));
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.required).toEqual(['a']);
    expect(toolJsonSchema(z.object({ a: z.string(), count: z.number().default(10) }), { io: 'output' }).required).toEqual(['a', 'count']);
  });

  it('draft-07 on request, and portable is what the gateway sends a model server (no $schema, no pattern)', () => {
    expect(toolJsonSchema(z.object({ a: z.string() }), { dialect: 'draft-07' }).$schema).toBe('http://json-schema.org/draft-07/schema#');
    const portable = toolJsonSchema(toolsByName.find_patients.inputSchema, { dialect: 'portable' });
    expect(portable.$schema).toBeUndefined();
    expect(JSON.stringify(portable)).not.toContain('"pattern"');
  });
});
