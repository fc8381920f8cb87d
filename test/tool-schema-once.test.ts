// Issue 29 review: each tool's JSON Schema is converted once per process. Boot used to convert every built-in three
// times (executeTool's catalogue, openAiToolDefinitions and the gateway's own catalogue). The real converter runs,
// wrapped to count its calls; the gateway's tools come from the composition root as `serve` builds them.
import { describe, expect, it, vi } from 'vitest';
import type * as ToolJsonSchemaModule from '../src/tools/kit/tool-json-schema.ts';

const converted = vi.hoisted(() => [] as unknown[]);
vi.mock('../src/tools/kit/tool-json-schema.ts', async (importOriginal) => {
  const real = await importOriginal<typeof ToolJsonSchemaModule>();
  return {
    ...real,
    toolJsonSchema: (schema: unknown, opts?: Parameters<typeof real.toolJsonSchema>[1]) => {
      converted.push(schema);
      return real.toolJsonSchema(schema as Parameters<typeof real.toolJsonSchema>[0], opts);
    },
  };
});

const { gatewayToolCatalogue } = await import('../src/composition/compose-gateway.ts');
const { loadConfig } = await import('../src/composition/config.ts');
const { openAiToolDefinitions, toolRegistry, toOpenAiTool } = await import('../src/tools/index.ts');

describe("the built-in tools' JSON Schemas", () => {
  it('are converted once each, however many catalogues and lists are built from them', async () => {
    const catalogue = await gatewayToolCatalogue({ config: loadConfig({}) });
    await gatewayToolCatalogue({ config: loadConfig({}) });
    const inputs = new Set([...toolRegistry.values()].map((t) => t.inputSchema));
    const ofInputs = converted.filter((s) => inputs.has(s as never));
    expect(ofInputs).toHaveLength(toolRegistry.size);
    expect(new Set(ofInputs).size).toBe(toolRegistry.size);
    // One conversion, equal everywhere: the catalogue offers what openAiToolDefinitions lists.
    expect(catalogue.definitions({ writesEnabled: true })).toEqual(openAiToolDefinitions({ writesEnabled: true }));
  });

  it('are handed out as copies: editing one changes no other', () => {
    const [first] = openAiToolDefinitions({ writesEnabled: false });
    first.function.parameters.properties = {};
    first.function.description = 'edited';
    const again = toOpenAiTool(toolRegistry.get(first.function.name)!);
    again.function.parameters.required.push('edited');
    const fresh = openAiToolDefinitions({ writesEnabled: false })[0];
    expect(fresh.function.description).not.toBe('edited');
    expect(Object.keys(fresh.function.parameters.properties).length).toBeGreaterThan(0);
    expect(fresh.function.parameters.required).not.toContain('edited');
  });
});
