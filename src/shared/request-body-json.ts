// A model request carries the same tool definitions on every step of every request (about 26 KB for the built-in
// tools): spelled out once per list and spliced into each body, instead of JSON.stringify walking them each time
// (87 µs of a tool round's two model calls each, measured in the capacity bench's profile).
import { randomUUID } from 'node:crypto';

const spelled = new WeakMap<object, string>();
// A key-and-value pair no body can hold by chance: a NUL and a fresh UUID, as JSON.stringify writes them.
const PLACE = `\u0000tools:${randomUUID()}`;
const PLACE_JSON = `"tools":${JSON.stringify(PLACE)}`;

/**
 * Marks a list of tool definitions as settled: its JSON text is written now and reused by every body that carries
 * this same list. Only for a list nobody edits afterwards (the server's own definitions, built once).
 */
export function keepToolsJson(tools: readonly unknown[]): void {
  if (!spelled.has(tools)) spelled.set(tools, JSON.stringify(tools));
}

/** `JSON.stringify(body)`, the same text, with a kept `tools` list spliced in rather than written again. */
export function stringifyRequestBody(body: Record<string, unknown>): string {
  const tools = body.tools;
  const text = typeof tools === 'object' && tools !== null ? spelled.get(tools) : undefined;
  if (text === undefined) return JSON.stringify(body);
  const json = JSON.stringify({ ...body, tools: PLACE });
  const at = json.indexOf(PLACE_JSON);
  return `${json.slice(0, at)}"tools":${text}${json.slice(at + PLACE_JSON.length)}`;
}
