// SMART's discovery document, `<FHIR base>/.well-known/smart-configuration`: where the token endpoint is, and
// whether the server says it takes signed assertions.
import { z } from 'zod';

const smartConfiguration = z.looseObject({
  token_endpoint: z.url({ protocol: /^https?$/ }),
  token_endpoint_auth_methods_supported: z.array(z.string()).optional(),
});

/** The token endpoint; throws an Error saying what went wrong (unreachable, not JSON, no token_endpoint). */
export async function discoverTokenUrl(opts: { baseUrl: string; fetch: typeof fetch; timeoutMs: number }): Promise<string> {
  const url = `${opts.baseUrl.replace(/\/+$/, '')}/.well-known/smart-configuration`;
  let res: Response;
  try {
    res = await opts.fetch(url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(opts.timeoutMs),
      redirect: 'error',
    });
  } catch (err) {
    throw new Error(
      `${url} unreachable (${(err as Error).name === 'TimeoutError' ? 'timeout' : String((err as Error).cause ?? (err as Error).message)})`,
      { cause: err },
    );
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    throw new Error(`${url} answered HTTP ${res.status}`);
  }
  const parsed = smartConfiguration.safeParse(await res.json().catch(() => undefined));
  if (!parsed.success) throw new Error(`${url} has no usable token_endpoint`);
  return parsed.data.token_endpoint;
}
