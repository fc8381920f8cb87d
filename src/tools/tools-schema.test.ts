// The OpenAI tool definitions are what models see: they must be well-formed JSON Schema objects, fully
// described, with bounded integers, in the subset grammar converters accept (test/tool-schema-portability.test.ts
// converts them), and must agree with the registry and the writes switch.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { openAiToolDefinitions, renderToolsMarkdownTable, toolRegistry, tools } from './index.ts';
import { PORTABLE_MAX_LENGTH } from './kit/portable-json-schema.ts';

type Schema = Record<string, unknown>;

/** Every sub-schema with its JSON path. */
function walk(schema: unknown, path: string, out: Array<[string, Schema]> = []): Array<[string, Schema]> {
  if (!schema || typeof schema !== 'object') return out;
  const s = schema as Schema;
  out.push([path, s]);
  for (const [k, v] of Object.entries((s.properties as Record<string, unknown>) ?? {})) walk(v, `${path}.${k}`, out);
  if (s.items) walk(s.items, `${path}[]`, out);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
    ((s[key] as unknown[]) ?? []).forEach((v, i) => walk(v, `${path}.${key}[${i}]`, out));
  return out;
}

const allKeys = (v: unknown): string[] => (v && typeof v === 'object' ? Object.entries(v).flatMap(([k, x]) => [k, ...allKeys(x)]) : []);

describe('tool definitions', () => {
  it('cover every registered tool exactly once, with unique names', () => {
    expect(tools.map((t) => t.function.name).sort()).toEqual([...toolRegistry.keys()].sort());
    expect(new Set(tools.map((t) => t.function.name)).size).toBe(tools.length);
    expect(tools.length).toBeGreaterThanOrEqual(13);
  });

  it.each(tools.map((t) => [t.function.name, t] as const))('%s is a well-formed function definition', (_name, tool) => {
    expect(tool.type).toBe('function');
    expect(tool.function.name).toMatch(/^[a-z][a-z_]{2,63}$/);
    expect(tool.function.description.length).toBeGreaterThan(20);
    const params = tool.function.parameters;
    expect(params.type).toBe('object');
    expect(params.properties).toBeTypeOf('object');
    expect(Array.isArray(params.required)).toBe(true);
    for (const r of params.required) expect(Object.keys(params.properties)).toContain(r);
    expect(allKeys(params)).not.toContain('$schema');
    for (const [path, s] of walk(params, '$').slice(1)) {
      expect(s.type ?? s.anyOf ?? s.enum, `${path} has a type`).toBeDefined();
      if (!path.includes('.anyOf[')) expect(s.description, `${path} is described`).toBeTypeOf('string');
      if (s.type === 'integer') {
        expect(s.minimum, `${path} has a minimum`).toBeTypeOf('number');
        expect(s.maximum, `${path} has a maximum`).toBeTypeOf('number');
        // zod writes ±MAX_SAFE_INTEGER for an int nobody bounded
        expect(Math.max(Math.abs(s.minimum as number), Math.abs(s.maximum as number)), `${path} has chosen bounds`).toBeLessThan(
          Number.MAX_SAFE_INTEGER,
        );
      }
      expect(s.pattern, `${path} has no pattern; zod checks it (src/tools/kit/portable-json-schema.ts)`).toBeUndefined();
      if (s.maxLength !== undefined) expect(s.maxLength, `${path} maxLength`).toBeLessThanOrEqual(PORTABLE_MAX_LENGTH);
      if (s.type === 'object') {
        expect(s.properties, `${path} has properties`).toBeTypeOf('object');
        expect(Array.isArray(s.required), `${path} has required`).toBe(true);
      }
    }
  });

  it('offers write tools only when writes are enabled', () => {
    const writeNames = [...toolRegistry.values()]
      .filter((t) => t.write)
      .map((t) => t.name)
      .sort();
    expect(writeNames).toEqual(['order_medication', 'order_service', 'record_observation']);
    const off = openAiToolDefinitions({ writesEnabled: false }).map((t) => t.function.name);
    const on = openAiToolDefinitions({ writesEnabled: true }).map((t) => t.function.name);
    expect(off.some((n) => writeNames.includes(n))).toBe(false);
    expect(on.sort()).toEqual(tools.map((t) => t.function.name).sort());
  });

  it('returns copies, so a caller cannot corrupt the shared definitions', () => {
    const defs = openAiToolDefinitions({ writesEnabled: true });
    defs[0].function.parameters.properties = {};
    expect(Object.keys(openAiToolDefinitions({ writesEnabled: true })[0].function.parameters.properties).length).toBeGreaterThan(0);
  });

  it('renders a markdown table with one row per tool', () => {
    const table = renderToolsMarkdownTable();
    const rows = table.trim().split('\n');
    expect(rows[0]).toBe('| name | kind | description | parameters |');
    expect(rows).toHaveLength(tools.length + 2);
    expect(table).toMatch(/\| `record_observation` \| write \|/);
    expect(table).toMatch(/\| `search_observations` \| read \|.*`patient`, `code\?`/);
  });

  it('docs/tools.md carries the current table', async () => {
    const page = await readFile(new URL('../../docs/tools.md', import.meta.url), 'utf8');
    expect(page).toContain(renderToolsMarkdownTable().trim());
  });
});
