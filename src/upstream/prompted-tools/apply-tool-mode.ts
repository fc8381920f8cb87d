// How the configured upstream receives tools: `native` sends `tools` as the server's API defines it; `prompted`
// writes them into the prompt and parses `<tool_call>` text; `auto` prompts only the servers known to ignore `tools`.
import type { ModelUpstream } from '../model-upstream.ts';
import { createPromptedToolsUpstream } from './prompted-tools-upstream.ts';

export type ToolMode = 'auto' | 'native' | 'prompted';

/** Flavours whose server drops `tools` without a word (llama-cpp-python's default chat handlers, issue 9). */
const TOOLLESS_FLAVOURS: ReadonlySet<string> = new Set(['llama-cpp-python']);

export function applyToolMode(upstream: ModelUpstream, mode: ToolMode, o: { generateId?: () => string } = {}): ModelUpstream {
  const prompted = mode === 'prompted' || (mode === 'auto' && TOOLLESS_FLAVOURS.has(upstream.flavour));
  return prompted ? createPromptedToolsUpstream({ upstream, generateId: o.generateId }) : upstream;
}
