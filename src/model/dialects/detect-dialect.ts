// Which dialect an upstream speaks, from what it shows before the first request: its host, its port, the
// `owned_by` of its /models listing and, when that names no known server, probes only one server answers.
// When unsure the answer is the generic dialect, never api.openai.com's.
import { DIALECTS, FALLBACK_DIALECT } from './index.ts';
import type { DialectName } from './upstream-dialect.ts';

export interface DetectedDialect {
  name: DialectName;
  /** Why: for the boot log. */
  evidence: string;
}

export interface DetectDialectOptions {
  /** The upstream base URL, ending in /v1. */
  baseUrl: string;
  apiKey?: string;
  fetch?: typeof fetch;
  /** Per request. */
  timeoutMs?: number;
}

const dialects = Object.values(DIALECTS);

export async function detectDialect(o: DetectDialectOptions): Promise<DetectedDialect> {
  const url = new URL(o.baseUrl);
  for (const d of dialects) if (d.detection.hosts?.test(url.hostname)) return { name: d.name, evidence: `host ${url.hostname}` };
  for (const d of dialects) if (d.detection.port && d.detection.port === url.port) return { name: d.name, evidence: `port ${url.port}` };

  const base = o.baseUrl.replace(/\/+$/, '');
  /** Undefined when the server answered with no usable JSON; throws only when it cannot be reached. */
  const getJson = async (target: string): Promise<unknown> => {
    const res = await (o.fetch ?? fetch)(target, {
      headers: o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {},
      signal: AbortSignal.timeout(o.timeoutMs ?? 3000),
      // A redirect is no answer: following it could carry the key to another host.
      redirect: 'manual',
    });
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      return undefined;
    }
    return res.json().catch(() => undefined);
  };

  let owner: string | undefined;
  try {
    owner = ownerOf(await getJson(`${base}/models`));
  } catch {
    // Unreachable at boot is not fatal, and probing an unreachable server would only double the wait.
    return { name: FALLBACK_DIALECT, evidence: 'upstream unreachable' };
  }
  if (owner) for (const d of dialects) if (d.detection.owners?.includes(owner)) return { name: d.name, evidence: `owned_by ${owner}` };

  const root = base.replace(/\/v1$/, '');
  for (const d of dialects) {
    const probe = d.detection.probe;
    if (!probe) continue;
    try {
      if (probe.matches(await getJson(`${root}${probe.path}`))) return { name: d.name, evidence: `GET ${probe.path}` };
    } catch {
      // not this one
    }
  }
  return { name: FALLBACK_DIALECT, evidence: owner ? `unknown owned_by ${owner}` : 'no owned_by' };
}

function ownerOf(listing: unknown): string | undefined {
  const owner = (listing as { data?: Array<{ owned_by?: unknown }> } | undefined)?.data?.[0]?.owned_by;
  return typeof owner === 'string' ? owner.toLowerCase() : undefined;
}
