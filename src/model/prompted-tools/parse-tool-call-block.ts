// The text between `<tool_call>` and `</tool_call>` → a function name and its arguments JSON, or null.

export interface ParsedToolCall {
  name: string;
  /** The arguments as a JSON string, or the block's raw text when the block is not JSON (see below). */
  arguments: string;
}

const NAME = /["']name["']\s*:\s*["']([^"'\\\s]+)["']/;

/**
 * `{"name": …, "arguments": {…}}`; `parameters` (Llama's word) and double-encoded string arguments are accepted.
 *
 * Malformed blocks, with `lenient` (a block closed by `</tool_call>`): when the name can still be read, the
 * block becomes a call to that name whose arguments are the raw block text. The agent loop's argument
 * validation then answers with an `invalid_arguments` tool message and the model gets to fix its call, which is
 * how the loop treats every other bad call. Without a readable name there is nothing to address the error to:
 * null, and the caller keeps the block as content, verbatim, so the failure is at least visible.
 */
export function parseToolCallBlock(text: string, { lenient }: { lenient: boolean }): ParsedToolCall | null {
  const trimmed = text.trim();
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    const name = lenient ? NAME.exec(trimmed)?.[1] : undefined;
    return name ? { name, arguments: trimmed } : null;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const { name, arguments: args, parameters } = value as Record<string, unknown>;
  if (typeof name !== 'string' || !name) return null;
  const given = args ?? parameters ?? {};
  return { name, arguments: typeof given === 'string' ? given : JSON.stringify(given) };
}
