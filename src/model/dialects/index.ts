// The registry: one dialect per HTTP flavour (the Record makes a missing one a type error).
import { deepseekDialect } from './deepseek.ts';
import { llamaCppPythonDialect } from './llama-cpp-python.ts';
import { llamacppDialect } from './llamacpp.ts';
import { ollamaDialect } from './ollama.ts';
import { openaiCompatibleDialect } from './openai-compatible.ts';
import { openaiDialect } from './openai.ts';
import { sglangDialect } from './sglang.ts';
import type { DialectName, UpstreamDialect } from './upstream-dialect.ts';
import { vllmDialect } from './vllm.ts';

export type { DialectName, UpstreamDialect } from './upstream-dialect.ts';

/** In detection order: hosted APIs by host first, then servers by port, owner and probe. */
export const DIALECTS: Readonly<Record<DialectName, UpstreamDialect>> = {
  deepseek: deepseekDialect,
  openai: openaiDialect,
  ollama: ollamaDialect,
  vllm: vllmDialect,
  sglang: sglangDialect,
  llamacpp: llamacppDialect,
  'llama-cpp-python': llamaCppPythonDialect,
  'openai-compatible': openaiCompatibleDialect,
};

/** The default for servers nobody recognised: sends `max_tokens`, which every OpenAI-compatible server knows. */
export const FALLBACK_DIALECT: DialectName = 'openai-compatible';

/** Every flavour spoken over HTTP: the UPSTREAM_FLAVOUR values (with `auto`). */
export const DIALECT_NAMES = Object.keys(DIALECTS) as [DialectName, ...DialectName[]];

export const dialectFor = (name: DialectName): UpstreamDialect => DIALECTS[name];
