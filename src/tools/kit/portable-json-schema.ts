// The JSON Schema a model sees: only what every grammar converter we test accepts (llama.cpp's
// json_schema_to_grammar as vendored by llama-cpp-python, node-llama-cpp's createGrammarForJsonSchema), because a
// server that builds a grammar from a tool (forced tool_choice) fails the request, or crashes, on a schema it cannot
// convert. zod stays the source of truth: executeTool still enforces every rule dropped here, and a dropped rule's
// text moves into the description, so the model still reads it. test/tool-schema-portability.test.ts has the evidence.
import { z } from 'zod';

type JsonSchema = Record<string, unknown>;

/**
 * Longest `maxLength` kept. llama-cpp-python nests one group per optional character, and llama.cpp's grammar parser
 * refuses more than about 1000 of them ("number of rules that are going to be repeated multiplied by the new
 * repetition exceeds sane defaults").
 */
export const PORTABLE_MAX_LENGTH = 1000;

/**
 * `z.toJSONSchema()`'s input view (defaults make fields optional) without `$schema`, without `pattern` (regex escapes
 * such as `\s`, `\d` and `\/` become GBNF llama.cpp refuses; `(?:` and unanchored patterns stop the converter) and
 * without a `maxLength` above {@link PORTABLE_MAX_LENGTH}.
 */
export function portableJsonSchema(schema: z.ZodType): JsonSchema {
  // Regex checks keep their error message; the JSON Schema keeps only the pattern. Collected per pattern source.
  const ruleText = new Map<string, string>();
  const json = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: ({ zodSchema }) => {
      for (const check of zodSchema._zod.def.checks ?? []) {
        const def = check._zod.def as { format?: string; pattern?: RegExp; error?: (issue?: unknown) => unknown };
        if (def.format !== 'regex' || !def.pattern) continue;
        const message = errorText(def.error);
        if (message && !ruleText.has(def.pattern.source)) ruleText.set(def.pattern.source, message);
      }
    },
  }) as JsonSchema;
  delete json.$schema;
  return rewrite(json, ruleText);
}

function rewrite(node: JsonSchema, ruleText: Map<string, string>): JsonSchema {
  // zod writes one pattern as `pattern`, several as `allOf: [{pattern}, …]`.
  const patternOnly = (s: JsonSchema) => Object.keys(s).length === 1 && typeof s.pattern === 'string';
  const allOf = Array.isArray(node.allOf) ? (node.allOf as JsonSchema[]) : [];
  const patterns = [node.pattern, ...allOf.filter(patternOnly).map((s) => s.pattern)].filter((p): p is string => typeof p === 'string');

  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'pattern') continue;
    if (key === 'properties' || key === '$defs') {
      out[key] = Object.fromEntries(Object.entries(value as Record<string, JsonSchema>).map(([k, v]) => [k, rewrite(v, ruleText)]));
    } else if (key === 'items' || key === 'additionalProperties') {
      out[key] = isSchema(value) ? rewrite(value, ruleText) : value;
    } else if (key === 'allOf') {
      const rest = allOf.filter((s) => !patternOnly(s)).map((v) => rewrite(v, ruleText));
      if (rest.length) out.allOf = rest;
    } else if (key === 'anyOf' || key === 'oneOf' || key === 'prefixItems') {
      out[key] = (value as JsonSchema[]).map((v) => rewrite(v, ruleText));
    } else {
      out[key] = value;
    }
  }

  const rules: string[] = [];
  for (const pattern of patterns) {
    const text = ruleText.get(pattern);
    // A format's own pattern (z.email(), z.iso.datetime()) is said by `format`, which stays.
    if (text) rules.push(text);
    else if (!out.format) rules.push(`must match the regular expression /${pattern}/`);
  }
  if (typeof out.maxLength === 'number' && out.maxLength > PORTABLE_MAX_LENGTH) {
    rules.push(`at most ${out.maxLength} characters`);
    delete out.maxLength;
  }
  if (rules.length) out.description = withRules(out.description as string | undefined, rules);
  return out;
}

/** The description, then each rule it does not already state, as sentences. */
function withRules(description: string | undefined, rules: string[]): string {
  const said = (description ?? '').toLowerCase();
  const sentences = rules.filter((r) => !said.includes(r.toLowerCase())).map((r) => `${r[0].toUpperCase()}${r.slice(1)}.`);
  if (!sentences.length) return description ?? '';
  return [description?.replace(/([^.])$/, '$1.'), ...sentences].filter(Boolean).join(' ');
}

function errorText(error: ((issue?: unknown) => unknown) | undefined): string | undefined {
  try {
    const result = error?.();
    const text = typeof result === 'string' ? result : (result as { message?: unknown } | undefined)?.message;
    return typeof text === 'string' && text ? text : undefined;
  } catch {
    return undefined; // an error function that needs the issue: fall back to the pattern itself
  }
}

const isSchema = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);
