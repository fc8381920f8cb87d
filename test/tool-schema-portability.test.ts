// Issue 9: llama-cpp-python turned a tool's JSON Schema into a GBNF grammar for a forced tool_choice; llama.cpp's
// grammar parser refused the pattern `^[^\s&#]+( [^\s&#]+)*$` ("unknown escape") and the server crashed. Here every
// tool's `parameters`, exactly as models get them, must convert with both converters a local server may use, the
// GBNF must parse with llama.cpp's own parser (node-llama-cpp's binding, no model needed), and real arguments must
// fit the grammar. The rules taken out of the JSON Schema are still zod's to enforce, and that is tested too.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { getLlama, LlamaLogLevel, type Llama, type LlamaGrammar } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { FhirClient } from '../src/fhir/client/fhir-client.ts';
import { executeTool, toolRegistry, tools, type OpenAiTool } from '../src/tools/index.ts';
import { PORTABLE_MAX_LENGTH, portableJsonSchema } from '../src/tools/kit/portable-json-schema.ts';
import { dateField, dateTimeField, idField, NDC, patientField, RXNORM, tokenField } from '../src/tools/kit/tool-fields.ts';

type JsonSchema = Record<string, unknown> & { type?: unknown; properties?: Record<string, JsonSchema>; required?: string[] };
type Args = Record<string, unknown>;

// --- llama.cpp's JSON-Schema converter, as llama-cpp-python 0.3.36 ships and runs it ---------------------------------
// Its server builds a forced tool call's grammar with LlamaGrammar.from_json_schema(json.dumps(tool["function"]["parameters"]))
// (llama_cpp/llama_chat_format.py), i.e. llama_cpp/llama_grammar.py: llama.cpp's examples/json_schema_to_grammar.py,
// vendored (pure stdlib). The sdist does not ship vendor/llama.cpp/examples/json_schema_to_grammar.py itself.
const LLAMA_CPP_PYTHON = 'llama-cpp-python==0.3.36';
const CACHE = fileURLToPath(new URL('../node_modules/.cache/llama-cpp-python-sdist/', import.meta.url));
const SDIST = `${CACHE}llama_cpp_python-0.3.36.tar.gz`;
const MEMBER = 'llama_cpp_python-0.3.36/llama_cpp/llama_grammar.py';
const CONVERTER = `${CACHE}llama_grammar.py`;

const EXTRACT = `
import os, sys, tarfile
with tarfile.open(sys.argv[1]) as sdist:
    data = sdist.extractfile(sys.argv[2]).read()
with open(sys.argv[3] + '.part', 'wb') as out:
    out.write(data)
os.replace(sys.argv[3] + '.part', sys.argv[3])
`;

const CONVERT = `
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location('llama_grammar', sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
out = []
for schema in json.load(sys.stdin):
    try:
        out.append({'gbnf': module.json_schema_to_gbnf(json.dumps(schema))})
    except Exception as e:
        out.append({'error': f'{type(e).__name__}: {e}'})
print(json.dumps(out))
`;

/** The converter's path, or why it cannot be had: only a missing python3, pip or PyPI is a reason to skip. */
function fetchConverter(): { path: string } | { skip: string } {
  if (existsSync(CONVERTER)) return { path: CONVERTER };
  const python = spawnSync('python3', ['--version'], { encoding: 'utf8' });
  if (python.error || python.status !== 0) return { skip: `python3 is not available: ${python.error?.message ?? python.stderr.trim()}` };
  if (!existsSync(SDIST)) {
    mkdirSync(CACHE, { recursive: true });
    const pip = spawnSync('python3', ['-m', 'pip', 'download', '--no-deps', '--no-binary', ':all:', LLAMA_CPP_PYTHON, '-d', CACHE], {
      encoding: 'utf8',
      timeout: 10 * 60_000,
    });
    if (pip.error || pip.status !== 0 || !existsSync(SDIST)) {
      const why = (pip.error?.message ?? `${pip.stderr}`).trim().split('\n').slice(-3).join(' ');
      return { skip: `pip could not download ${LLAMA_CPP_PYTHON} from PyPI: ${why}` };
    }
  }
  const extract = spawnSync('python3', ['-c', EXTRACT, SDIST, MEMBER, CONVERTER], { encoding: 'utf8' });
  if (extract.status !== 0) throw new Error(`cannot extract ${MEMBER} from ${SDIST}: ${extract.stderr}`);
  return { path: CONVERTER };
}

function llamaCppGbnf(converter: string, schemas: unknown[]): Array<{ gbnf?: string; error?: string }> {
  const run = spawnSync('python3', ['-c', CONVERT, converter], { input: JSON.stringify(schemas), encoding: 'utf8', maxBuffer: 64 << 20 });
  if (run.status !== 0) throw new Error(`${converter} did not run: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

// --- matching text against a grammar --------------------------------------------------------------------------------

/** llama.cpp's grammar engine over a whole text. node-llama-cpp 3.22.1 has it as LlamaGrammar._testText (internal). */
function accepts(grammar: LlamaGrammar, text: string): boolean {
  const testText = (grammar as unknown as { _testText?: (text: string) => boolean })._testText;
  if (typeof testText !== 'function') throw new Error('node-llama-cpp no longer has LlamaGrammar._testText: match texts another way');
  return testText.call(grammar, text);
}

/** node-llama-cpp's JSON-Schema grammar ends in four newlines (its stop trigger). */
const NODE_LLAMA_CPP_END = '\n\n\n\n';

/**
 * JSON with keys in the order a converter's grammar wants them: llama.cpp puts required properties first, then the
 * optional ones in schema order; node-llama-cpp keeps schema order.
 */
function serialize(value: unknown, schema: JsonSchema, order: 'required-first' | 'schema'): string {
  if (!schema.properties || typeof value !== 'object' || value === null || Array.isArray(value)) return JSON.stringify(value);
  const names = Object.keys(schema.properties);
  const required = schema.required ?? [];
  const keys = order === 'schema' ? names : [...names.filter((k) => required.includes(k)), ...names.filter((k) => !required.includes(k))];
  const extra = Object.keys(value).filter((k) => !names.includes(k));
  if (extra.length) throw new Error(`sample has properties the schema lacks: ${extra.join(', ')}`);
  const obj = value as Args;
  return `{${keys
    .filter((k) => k in obj)
    .map((k) => `${JSON.stringify(k)}:${serialize(obj[k], schema.properties![k], order)}`)
    .join(',')}}`;
}

/** Every property at every level: the only arguments node-llama-cpp's grammar allows (it treats all as required). */
function complete(value: unknown, schema: JsonSchema): boolean {
  if (!schema.properties) return true;
  const obj = value as Args;
  return Object.entries(schema.properties).every(([k, s]) => k in obj && complete(obj[k], s));
}

// --- valid arguments, from the tool descriptions and the tool contract suite ----------------------------------------

const LONG_NOTE = `Patient said "dizzy" – café, ${'x'.repeat(1500)}`; // beyond the JSON Schema's old maxLength of 1000
const SAMPLES: Record<string, Args[]> = {
  find_patients: [
    { family: 'Smith', birthdate: '1970-01-01' },
    {
      name: 'Peter',
      family: 'Smith',
      given: 'Peter',
      birthdate: '1970',
      identifier: 'urn:oid:2.16.840.1.113883.19.5|12345',
      gender: 'male',
      count: 10,
      raw: false,
      continuation: 'eyJ2IjoxfQ',
    },
  ],
  read_resource: [
    { resourceType: 'Patient', id: 'S1000001' },
    { resourceType: 'Observation', id: 'obs-S1000002-0019', raw: true },
  ],
  find_codes: [{ resourceType: 'Observation', text: 'potassium' }],
  search_observations: [
    { patient: 'S1000001', code: 'http://loinc.org|2823-3' },
    { patient: 'S1000001', category: 'Routine Vital Signs', text: 'heart rate' },
    {
      patient: 'Patient/S1000002',
      code: 'K,http://loinc.org|6298-4',
      text: 'potassium',
      category: 'laboratory',
      date_from: '2024-03-01',
      date_to: '2024-03-01T08:00:00Z',
      count: 2,
      raw: true,
      continuation: 'eyJ2IjoxfQ',
    },
  ],
  search_conditions: [
    {
      patient: 'S1000001',
      clinical_status: 'active',
      code: 'http://snomed.info/sct|44054006',
      text: 'diabetes',
      count: 50,
      raw: false,
      continuation: 'eyJ2IjoxfQ',
    },
  ],
  search_medication_requests: [
    { patient: 'S1000001', status: 'active' },
    {
      patient: 'S1000001',
      status: 'active',
      intent: 'order',
      code: `${RXNORM}|197361,${NDC}|0069-3150-83`,
      name: 'metformin',
      date_from: '2023',
      date_to: '2024-12',
      count: 200,
      raw: false,
      continuation: 'eyJ2IjoxfQ',
    },
  ],
  search_procedures: [
    {
      patient: 'S1000001',
      code: 'http://snomed.info/sct|80146002',
      text: 'appendectomy',
      status: 'completed',
      date_from: '1900-01-01',
      date_to: '2100-01-01',
      count: 1,
      raw: false,
      continuation: 'eyJ2IjoxfQ',
    },
  ],
  search_encounters: [
    {
      patient: 'S1000001',
      status: 'finished',
      class: 'AMB',
      date_from: '2024-01-01',
      date_to: '2100-01-01',
      count: 20,
      raw: false,
      continuation: 'eyJ2IjoxfQ',
    },
  ],
  search_allergies: [
    { patient: 'S1000001' },
    { patient: 'S1000001', clinical_status: 'active', code: 'Peanut', count: 200, raw: true, continuation: 'eyJ2IjoxfQ' },
  ],
  search_immunizations: [
    {
      patient: 'S1000001',
      vaccine_code: 'http://hl7.org/fhir/sid/cvx|140',
      status: 'completed',
      date_from: '2020-01-01',
      date_to: '2024-12-31',
      count: 50,
      raw: false,
      continuation: 'eyJ2IjoxfQ',
    },
  ],
  search_diagnostic_reports: [
    {
      patient: 'S1000001',
      code: 'http://loinc.org|24323-8',
      category: 'LAB',
      status: 'final',
      date_from: '1900-01-01',
      date_to: '2100-01-01',
      count: 20,
      raw: false,
      continuation: 'eyJ2IjoxfQ',
    },
  ],
  search_medication_administrations: [
    { patient: 'S1000001' },
    {
      patient: 'S1000001',
      name: 'heparin',
      code: 'http://example.org/formulary|HEPA5',
      status: 'completed',
      date_from: '2023',
      date_to: '2024-12',
      count: 200,
      raw: false,
      continuation: 'eyJ2IjoxfQ',
    },
  ],
  search_medication_dispenses: [
    {
      patient: 'S1000001',
      name: 'heparin',
      code: 'Heparin',
      status: 'completed',
      prescription: 'mr-1',
      count: 20,
      raw: false,
      continuation: 'eyJ2IjoxfQ',
    },
  ],
  search_medication_statements: [
    {
      patient: 'S1000001',
      name: 'aspirin',
      code: 'http://hl7.org/fhir/sid/ndc|00000000000',
      status: 'unknown',
      date_from: '2023',
      date_to: '2024-12',
      count: 20,
      raw: false,
      continuation: 'eyJ2IjoxfQ',
    },
  ],
  search_specimens: [
    {
      patient: 'S1000001',
      type: 'BLOOD CULTURE',
      date_from: '2023',
      date_to: '2024-12',
      count: 20,
      raw: false,
      continuation: 'eyJ2IjoxfQ',
    },
  ],
  record_observation: [
    {
      patient: 'S1000001',
      code: { system: 'http://loinc.org', code: '8867-4', display: 'Heart rate' },
      value_quantity: { value: 72, unit: '/min' },
    },
    {
      patient: 'S1000001',
      code: { code: 'BP' },
      category: 'vital-signs',
      blood_pressure: { systolic: 118, diastolic: 77 },
      effective_date_time: '2024-03-01T08:00:00+01:00',
      status: 'final',
      note: LONG_NOTE.slice(0, 900),
    },
    { patient: 'Patient/S1000001', code: { code: 'bp-text' }, value_string: '118/77 mmHg' },
    {
      patient: 'S1000001',
      code_text: 'BP',
      category_coding: { system: 'http://hl7.org/fhir/observation-category', code: 'vital-signs', display: 'Vital Signs' },
      value_string: '118/77 mmHg',
      effective_date_time: '2023-11-13T10:15:00+00:00',
    },
  ],
  order_medication: [
    {
      patient: 'S1000001',
      medication: { system: RXNORM, code: '204520', display: 'potassium chloride 20 MEQ' },
      dose: { value: 40, unit: 'mEq' },
      route: 'oral',
      rate: { value: 2, unit: 'h' },
      frequency: 'once',
      note: 'Recheck K in the morning',
      authored_on: '2023-11-13T10:15:00+00:00',
    },
  ],
  order_service: [
    { patient: 'S1000001', code: { system: 'http://loinc.org', code: '4548-4' } },
    {
      patient: 'S1000001',
      code: { system: 'http://loinc.org', code: '4548-4', display: 'Hemoglobin A1c' },
      category: 'lab',
      priority: 'stat',
      note: LONG_NOTE,
      occurrence_date_time: '2024-03-02T08:00:00Z',
      authored_on: '2024-03-01T10:15:00+00:00',
    },
  ],
};

/** Tools for which no valid arguments carry every property, so node-llama-cpp's grammar cannot produce a valid call. */
const NO_COMPLETE_SAMPLE: Record<string, string> = {
  record_observation: 'exactly one of value_quantity, value_string or blood_pressure is allowed',
};

const byName = new Map(tools.map((t) => [t.function.name, t] as const));
const params = (name: string) => byName.get(name)!.function.parameters as JsonSchema;
const NOT_A_PARAMETER = '{"not_a_parameter":true}';

describe('tool samples', () => {
  it('cover every tool, and zod accepts each of them', () => {
    expect(Object.keys(SAMPLES).sort()).toEqual([...toolRegistry.keys()].sort());
    for (const [name, samples] of Object.entries(SAMPLES)) {
      for (const args of samples)
        expect(toolRegistry.get(name)!.inputSchema.safeParse(args).error, `${name} ${JSON.stringify(args)}`).toBeUndefined();
    }
  });

  it('include arguments with every property for each tool that allows them', () => {
    for (const [name, samples] of Object.entries(SAMPLES)) {
      expect(
        samples.some((s) => complete(s, params(name))),
        name,
      ).toBe(!(name in NO_COMPLETE_SAMPLE));
    }
  });
});

let llama: Llama;
beforeAll(async () => {
  llama = await getLlama({ gpu: false, logLevel: LlamaLogLevel.error });
});
afterAll(async () => {
  await llama?.dispose();
});

/** llama.cpp's parser prints its reason ("unknown escape at …") on stderr; the binding only throws this. */
async function parseGbnf(grammar: string): Promise<LlamaGrammar> {
  return llama.createGrammar({ grammar });
}

describe('node-llama-cpp createGrammarForJsonSchema', () => {
  it.each(tools.map((t) => [t.function.name, t] as const))('%s: converts, parses, and fits its samples', async (name, tool: OpenAiTool) => {
    const grammar = await llama.createGrammarForJsonSchema(tool.function.parameters as never);
    expect(accepts(grammar, NOT_A_PARAMETER + NODE_LLAMA_CPP_END)).toBe(false);
    for (const args of SAMPLES[name].filter((s) => complete(s, params(name)))) {
      const text = serialize(args, params(name), 'schema');
      expect(accepts(grammar, text + NODE_LLAMA_CPP_END), text).toBe(true);
      expect(grammar.parse(text)).toEqual(JSON.parse(text));
    }
  });
});

describe(`llama.cpp json_schema_to_grammar (${LLAMA_CPP_PYTHON}) and llama.cpp's GBNF parser`, () => {
  let converter: { path: string } | { skip: string };
  let converted = new Map<string, { gbnf?: string; error?: string }>();
  beforeAll(() => {
    converter = fetchConverter();
    if ('skip' in converter) {
      console.warn(`[tool-schema-portability] skipping the llama.cpp converter tests: ${converter.skip}`);
      return;
    }
    const results = llamaCppGbnf(
      converter.path,
      tools.map((t) => t.function.parameters),
    );
    converted = new Map(tools.map((t, i) => [t.function.name, results[i]]));
  }, 15 * 60_000);

  const need = (ctx: { skip: (note?: string) => void }): string => {
    if ('skip' in converter) ctx.skip(converter.skip);
    return (converter as { path: string }).path;
  };

  it('reproduces issue 9: the old search-code pattern converts to GBNF that llama.cpp refuses', async (ctx) => {
    const [result] = llamaCppGbnf(need(ctx), [
      { type: 'object', properties: { code: { type: 'string', pattern: '^[^\\s&#]+( [^\\s&#]+)*$' } }, required: ['code'] },
    ]);
    expect(result.gbnf).toContain('[^\\s&#]');
    await expect(parseGbnf(result.gbnf!)).rejects.toThrow('Failed to parse grammar');
  });

  it.for(tools.map((t) => t.function.name))('%s: converts, parses, and fits its samples', async (name, ctx) => {
    need(ctx);
    const result = converted.get(name)!;
    expect(result.error, 'the converter raised').toBeUndefined();
    const grammar = await parseGbnf(result.gbnf!);
    expect(accepts(grammar, NOT_A_PARAMETER)).toBe(false);
    for (const args of SAMPLES[name]) {
      const text = serialize(args, params(name), 'required-first');
      expect(accepts(grammar, text), text.slice(0, 300)).toBe(true);
    }
  });
});

describe('portableJsonSchema', () => {
  const props = (shape: z.ZodRawShape) => portableJsonSchema(z.object(shape)).properties as Record<string, JsonSchema>;

  it('drops patterns and says the rule in the description instead, once', () => {
    const p = props({
      id: idField().describe('The id'),
      said: z.string().regex(/^\d+$/, 'must be digits').describe('Digits only: must be digits'),
      bare: z
        .string()
        .regex(/^[a-z]{2}$/)
        .describe('A code'),
      two: z.string().regex(/^a/, 'must start with "a"').regex(/b$/, 'must end with "b"').describe('Word'),
      email: z.email().describe('Mail'),
    });
    expect(JSON.stringify(p)).not.toMatch(/"pattern"|"allOf"/);
    expect(p.id.description).toBe('The id. Must be a FHIR id: letters, digits, "-" or ".", at most 64, and not only dots.');
    expect(p.said.description).toBe('Digits only: must be digits');
    expect(p.bare.description).toBe('A code. Must match the regular expression /^[a-z]{2}$/.');
    expect(p.two.description).toBe('Word. Must start with "a". Must end with "b".');
    expect(p.email).toEqual({ type: 'string', format: 'email', description: 'Mail' });
  });

  it(`keeps maxLength up to ${PORTABLE_MAX_LENGTH}, and says a longer one in the description`, () => {
    const p = props({ short: z.string().max(PORTABLE_MAX_LENGTH).describe('Short'), long: z.string().min(1).max(2000).describe('Long') });
    expect(p.short).toEqual({ type: 'string', maxLength: PORTABLE_MAX_LENGTH, description: 'Short' });
    expect(p.long).toEqual({ type: 'string', minLength: 1, description: 'Long. At most 2000 characters.' });
  });

  it('leaves no $schema, and no pattern in any tool', () => {
    const all = JSON.stringify(tools);
    expect(all).not.toContain('"$schema"');
    expect(all).not.toContain('"pattern"');
  });
});

describe('rules dropped from the JSON Schema are still enforced by zod', () => {
  const fhir = new Proxy({}, { get: () => () => Promise.reject(new Error('no FHIR call expected')) }) as FhirClient;
  const ctx = { fhir, now: () => new Date('2024-03-01T00:00:00Z'), writesEnabled: true, callId: 'call-1' };

  it('a search code with "&", "#" or stray whitespace is rejected', () => {
    const code = tokenField('code');
    for (const bad of ['K&_count=1000', 'http://loinc.org|2823-3#x', '&', '#', ' K', 'K ', 'K  Na', 'K\tNa', 'K\nNa']) {
      expect(code.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
    for (const good of ['K', 'http://loinc.org|2823-3', 'http://loinc.org|2823-3,http://loinc.org|6298-4', 'Body weight']) {
      expect(code.safeParse(good).success, good).toBe(true);
    }
  });

  it('so does executeTool, as a tool error the model can read, without calling FHIR', async () => {
    expect(params('search_observations').properties!.code.description).toContain('without "&", "#"');
    const result = await executeTool('search_observations', JSON.stringify({ patient: 'S1000001', code: 'K&_count=1000' }), ctx);
    expect(result).toMatchObject({
      ok: false,
      error: { code: 'invalid_arguments', details: [{ path: 'code', message: expect.stringContaining('"&"') }] },
    });
  });

  it('dates, dateTimes, patients and ids keep their patterns', async () => {
    expect(dateField('d').safeParse('03/01/2024').success).toBe(false);
    expect(dateField('d').safeParse('2024-03-01').success).toBe(true);
    expect(dateTimeField('t').safeParse('2024-03-01T08:00:00').success).toBe(false); // no timezone
    expect(patientField().safeParse('Patient/S1 000').success).toBe(false);
    expect(patientField().safeParse('Encounter/S1000001').success).toBe(false);
    expect(idField().safeParse('a/b').success).toBe(false);
    const result = await executeTool('read_resource', JSON.stringify({ resourceType: 'Patient', id: '../Patient?_count=1' }), ctx);
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
  });

  it('a note longer than the model was told is rejected', async () => {
    const args = { patient: 'S1000001', code: { system: 'http://loinc.org', code: '4548-4' }, note: 'x'.repeat(2001) };
    const result = await executeTool('order_service', JSON.stringify(args), ctx);
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid_arguments', details: [{ path: 'note' }] } });
  });
});
