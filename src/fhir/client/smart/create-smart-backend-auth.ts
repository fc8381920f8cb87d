// SMART Backend Services (SMART App Launch 2.x): a client-credentials grant authenticated by a JWT assertion the
// client signs with its private key. One token is shared by every request until shortly before it expires; while
// it is fetched, concurrent callers wait on the same request. Tokens and keys are never logged or put in errors,
// and an error names the token endpoint without its query or userinfo and the server's OAuth error code without
// its free text (error_description is the server's prose, and may quote what it was sent).
import { z } from 'zod';
import { describeNetworkFailure } from '../../../shared/describe-network-failure.ts';
import { untilAborted } from '../../../shared/until-aborted.ts';
import { urlForDisplay } from '../../../shared/url-for-display.ts';
import { FhirAuthError, type FhirAuth } from './fhir-auth.ts';
import type { SigningKey } from './read-private-key.ts';

const tokenResponse = z.looseObject({
  access_token: z.string().min(1),
  token_type: z.string().regex(/^bearer$/i, 'must be Bearer'),
  expires_in: z.number().positive().optional(),
  scope: z.string().optional(),
});
/** RFC 6749 §5.2: an error code is printable ASCII without `"` or `\\`; anything else is not shown. */
const errorResponse = z.looseObject({ error: z.string().regex(/^[\x20\x21\x23-\x5B\x5D-\x7E]{1,64}$/) });
/**
 * What an Authorization header can carry: visible ASCII, no spaces. A token with CR/LF or other controls would be
 * refused by fetch with an error quoting it, so it is refused here, when received, without being quoted.
 */
const HEADER_SAFE = /^[\x21-\x7E]+$/;

export interface SmartBackendAuthOptions {
  tokenUrl: string;
  clientId: string;
  key: SigningKey;
  /** SMART v2 scopes asked for, space-separated, e.g. `system/Patient.rs system/Observation.rs`. */
  scopes: string;
  fetch?: typeof fetch;
  /** Epoch milliseconds. */
  now?: () => number;
  /** A fresh `jti` per assertion. */
  newJti?: () => string;
  timeoutMs?: number;
  /** A token is renewed this long before it expires. Default 60 s. */
  refreshBeforeMs?: number;
}

export interface SmartBackendAuth extends FhirAuth {
  readonly tokenUrl: string;
  /** The scopes of the current token as the server granted them (its `scope`, else what was asked). */
  grantedScopes(): string[] | undefined;
  /** How many token requests were sent, for metrics and tests. */
  tokenRequests(): number;
}

/** Tokens without `expires_in` are kept this long (the SMART examples use 300 s). */
const DEFAULT_LIFETIME_S = 300;

export function createSmartBackendAuth(o: SmartBackendAuthOptions): SmartBackendAuth {
  const doFetch = o.fetch ?? globalThis.fetch;
  const now = o.now ?? Date.now;
  const newJti = o.newJti ?? (() => crypto.randomUUID());
  const refreshBeforeMs = o.refreshBeforeMs ?? 60_000;
  let current: { authorization: string; renewAt: number; scopes: string[] } | undefined;
  let pending: Promise<string> | undefined;
  let requests = 0;
  const shownUrl = urlForDisplay(o.tokenUrl);
  const fail = (why: string, code?: string) => new FhirAuthError(`authorisation server ${shownUrl}: ${why}`, code);

  async function assertion(): Promise<string> {
    // jose is imported here, with FHIR_AUTH=smart-backend, not at every gateway's boot.
    const { SignJWT } = await import('jose');
    const iat = Math.floor(now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: o.key.alg, kid: o.key.kid, typ: 'JWT' })
      .setIssuer(o.clientId)
      .setSubject(o.clientId)
      .setAudience(o.tokenUrl)
      .setIssuedAt(iat)
      .setExpirationTime(iat + 240)
      .setJti(newJti())
      .sign(o.key.key);
  }

  async function requestToken(): Promise<string> {
    requests++;
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      scope: o.scopes,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: await assertion(),
    });
    let res: Response;
    try {
      res = await doFetch(o.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body,
        signal: AbortSignal.timeout(o.timeoutMs ?? 10_000),
        redirect: 'error',
      });
    } catch (err) {
      throw fail(`unreachable (${describeNetworkFailure(err)})`);
    }
    const json: unknown = await res.json().catch(() => undefined);
    if (!res.ok) {
      const oauth = errorResponse.safeParse(json);
      throw fail(
        oauth.success ? `refused the token request: ${oauth.data.error}` : `answered HTTP ${res.status}`,
        oauth.success ? oauth.data.error : undefined,
      );
    }
    const token = tokenResponse.safeParse(json);
    // The field's name only: a zod message may quote the value, and the value may be the token.
    if (!token.success) throw fail(`unusable token response (${token.error.issues[0]?.path.join('.') || 'not a JSON object'})`);
    if (!HEADER_SAFE.test(token.data.access_token))
      throw fail('unusable token response (access_token has characters a header cannot carry)');
    const lifetimeMs = (token.data.expires_in ?? DEFAULT_LIFETIME_S) * 1000;
    const authorization = `Bearer ${token.data.access_token}`;
    current = {
      authorization,
      renewAt: now() + Math.max(lifetimeMs / 2, lifetimeMs - refreshBeforeMs),
      scopes: (token.data.scope ?? o.scopes).split(/\s+/).filter(Boolean),
    };
    return authorization;
  }

  return {
    tokenUrl: o.tokenUrl,
    async authorization(signal) {
      if (current && now() < current.renewAt) return current.authorization;
      pending ??= requestToken().finally(() => {
        pending = undefined;
      });
      // A caller that stops waiting (its request's timeout) does not stop the token request the others share.
      return untilAborted(pending, signal);
    },
    invalidate(authorization) {
      if (current?.authorization === authorization) current = undefined;
    },
    grantedScopes: () => current?.scopes,
    tokenRequests: () => requests,
  };
}
