// LOCAL_MODEL → a loaded GGUF, its context sequences and the ModelUpstream over them. CPU only: the prebuilt
// linux-x64 binary from npm, never a compile at boot. Any failure is one line naming LOCAL_MODEL.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { getLlama, LlamaChat, LlamaLogLevel, readGgufFileInfo, resolveModelFile } from 'node-llama-cpp';
import type { ModelUpstream } from '../model-upstream.ts';
import { createLocalModelUpstream } from './local-model-upstream.ts';
import { LocalModelError } from './local-model-error.ts';
import { createGrammarCache } from './output-grammar.ts';
import { createSequencePool } from './sequence-pool.ts';

export interface LocalModelOptions {
  /** A .gguf path, or a URI node-llama-cpp resolves and caches (`hf:<user>/<repo>:<quant>`). */
  source: string;
  threads: number;
  /** Tokens per sequence. */
  contextSize: number;
  /** Parallel sequences, each with its own KV cache. */
  sequences: number;
  maxQueue: number;
  /** Where `hf:` downloads are cached. */
  cacheDir: string;
  log?: (message: string) => void;
}

export interface LocalModel {
  upstream: ModelUpstream;
  /** The resolved file and what was loaded, for the boot log. */
  info: { file: string; contextSize: number; sequences: number; threads: number; loadMs: number; chatWrapper: string };
  close(): Promise<void>;
}

export { LocalModelError };

const firstLine = (err: unknown) => String((err as Error)?.message ?? err).split('\n')[0];

async function resolveSource(source: string, cacheDir: string): Promise<string> {
  const isUri = /^[a-z]+:/i.test(source) && !/^[a-z]:[\\/]/i.test(source);
  if (!isUri) {
    const file = path.resolve(source);
    if (!existsSync(file)) throw new LocalModelError(`LOCAL_MODEL=${JSON.stringify(source)}: no such file`);
    return file;
  }
  try {
    return await resolveModelFile(source, { directory: cacheDir, cli: false } as Parameters<typeof resolveModelFile>[1]);
  } catch (err) {
    throw new LocalModelError(`LOCAL_MODEL=${JSON.stringify(source)}: could not resolve or download it: ${firstLine(err)}`);
  }
}

export async function loadLocalModel(o: LocalModelOptions): Promise<LocalModel> {
  const started = performance.now();
  const file = await resolveSource(o.source, o.cacheDir);
  try {
    // Reading the header first turns a truncated or non-GGUF file into a clear error, not a native abort.
    await readGgufFileInfo(file, { readTensorInfo: false });
  } catch (err) {
    throw new LocalModelError(`LOCAL_MODEL=${JSON.stringify(o.source)}: not a readable GGUF model: ${firstLine(err)}`);
  }
  let llama;
  try {
    llama = await getLlama({
      gpu: false,
      build: 'never',
      maxThreads: o.threads,
      logLevel: LlamaLogLevel.error,
      logger: (_level, message) => o.log?.(message.trim()),
    });
  } catch (err) {
    throw new LocalModelError(`LOCAL_MODEL: no prebuilt llama.cpp binary for this platform (${firstLine(err)})`);
  }
  try {
    const model = await llama.loadModel({ modelPath: file });
    const context = await model.createContext({
      sequences: o.sequences,
      contextSize: Math.min(o.contextSize, model.trainContextSize),
      threads: o.threads,
    });
    const chats = Array.from({ length: o.sequences }, () => new LlamaChat({ contextSequence: context.getSequence() }));
    const upstream = createLocalModelUpstream({
      model: path.basename(file).replace(/\.gguf$/i, ''),
      pool: createSequencePool({ slots: chats, maxQueue: o.maxQueue }),
      grammars: createGrammarCache(llama),
    });
    return {
      upstream,
      info: {
        file,
        contextSize: context.contextSize,
        sequences: o.sequences,
        threads: o.threads,
        loadMs: Math.round(performance.now() - started),
        chatWrapper: chats[0]!.chatWrapper.wrapperName,
      },
      async close() {
        for (const c of chats) c.dispose();
        await context.dispose();
        await model.dispose();
        await llama.dispose();
      },
    };
  } catch (err) {
    await llama.dispose().catch(() => {});
    throw new LocalModelError(`LOCAL_MODEL=${JSON.stringify(o.source)}: could not load the model: ${firstLine(err)}`);
  }
}
