// How the configured upstream receives tools: `native` sends `tools` as the server's API defines it; `prompted`
// writes them into the prompt and parses `<tool_call>` text; `auto` prompts only the servers known to ignore `tools`.
import { dialectFor } from '../dialects/index.ts';
import type { ModelUpstream } from '../model-upstream.ts';
import { createPromptedToolsUpstream } from './prompted-tools-upstream.ts';

export type ToolMode = 'auto' | 'native' | 'prompted';

/** The dialect says whether its server drops `tools` without a word; the in-process model calls tools natively. */
const ignoresTools = (upstream: ModelUpstream) => upstream.flavour !== 'local' && dialectFor(upstream.flavour).ignoresTools;

export function applyToolMode(upstream: ModelUpstream, mode: ToolMode, o: { generateId?: () => string } = {}): ModelUpstream {
  const prompted = mode === 'prompted' || (mode === 'auto' && ignoresTools(upstream));
  return prompted ? createPromptedToolsUpstream({ upstream, generateId: o.generateId }) : upstream;
}
