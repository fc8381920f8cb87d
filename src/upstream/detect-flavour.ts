// Best-effort guess of the upstream flavour from its URL and its /models listing (`owned_by`).
import type { UpstreamFlavour } from './model-upstream.ts';

const BY_HOST: Array<[RegExp, UpstreamFlavour]> = [
  [/(^|\.)deepseek\.com$/, 'deepseek'],
  [/(^|\.)bigmodel\.cn$|(^|\.)z\.ai$|(^|\.)moonshot\.(ai|cn)$/, 'deepseek'],
  [/(^|\.)openai\.com$/, 'openai'],
];

const BY_OWNER: Record<string, UpstreamFlavour> = { vllm: 'vllm', sglang: 'sglang', llamacpp: 'llamacpp', 'llama.cpp': 'llamacpp', library: 'ollama', ollama: 'ollama' };

export async function detectFlavour(o: { baseUrl: string; apiKey?: string; fetch?: typeof fetch; timeoutMs?: number }): Promise<UpstreamFlavour> {
  const url = new URL(o.baseUrl);
  for (const [re, flavour] of BY_HOST) if (re.test(url.hostname)) return flavour;
  if (url.port === '11434') return 'ollama';
  try {
    const res = await (o.fetch ?? fetch)(`${o.baseUrl.replace(/\/+$/, '')}/models`, {
      headers: o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {},
      signal: AbortSignal.timeout(o.timeoutMs ?? 3000),
    });
    const json = (await res.json()) as { data?: Array<{ owned_by?: string }> };
    const owner = json.data?.[0]?.owned_by?.toLowerCase();
    if (owner && BY_OWNER[owner]) return BY_OWNER[owner];
  } catch {
    // Unreachable upstream at boot is not fatal; the generic dialect works everywhere.
  }
  return 'openai';
}
