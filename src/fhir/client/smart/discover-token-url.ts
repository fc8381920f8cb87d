// SMART's discovery document, `<FHIR base>/.well-known/smart-configuration`: where the token endpoint is, and
// whether the server says it takes signed assertions.
import { z } from 'zod';
import { describeNetworkFailure } from '../../../shared/describe-network-failure.ts';
import { urlForDisplay } from '../../../shared/url-for-display.ts';

const smartConfiguration = z.looseObject({
  token_endpoint: z.url({ protocol: /^https?$/ }),
  token_endpoint_auth_methods_supported: z.array(z.string()).optional(),
});

/** The token endpoint; throws an Error saying what went wrong (unreachable, not JSON, no token_endpoint). */
export async function discoverTokenUrl(opts: { baseUrl: string; fetch: typeof fetch; timeoutMs: number }): Promise<string> {
  const url = `${opts.baseUrl.replace(/\/+$/, '')}/.well-known/smart-configuration`;
  // Errors name it without userinfo or query: they reach the boot line and GET /ready.
  const shown = urlForDisplay(url);
  let res: Response;
  try {
    res = await opts.fetch(url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(opts.timeoutMs),
      redirect: 'error',
    });
  } catch (err) {
    throw new Error(`${shown} unreachable (${describeNetworkFailure(err)})`, { cause: err });
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    throw new Error(`${shown} answered HTTP ${res.status}`);
  }
  const parsed = smartConfiguration.safeParse(await res.json().catch(() => undefined));
  if (!parsed.success) throw new Error(`${shown} has no usable token_endpoint`);
  return parsed.data.token_endpoint;
}
