// A real SMART Backend Services setup on loopback for tests: panva's oidc-provider as the authorisation server
// (client_credentials, private_key_jwt, JWT access tokens for the FHIR server as a resource), and in front of the
// embedded FHIR server a resource-server layer that verifies each token with jose against the provider's JWKS and
// refuses missing (401), invalid or expired (401) and under-scoped (403) ones. Clients live in an adapter map, so a
// test can revoke one; a test can also expire the tokens seen so far, as if their time had run out.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { embeddedFhirPlugin } from '../../src/fhir/server/embedded-fhir-plugin.ts';
import type { EmbeddedFhirServer } from '../../src/fhir/server/embedded-fhir-server.ts';
import { scopesAllow } from '../../src/tools/kit/tools-for-scopes.ts';

type Store = Map<string, unknown>;
const stores = new Map<string, Store>();
const storeOf = (name: string): Store => stores.get(name) ?? stores.set(name, new Map()).get(name)!;

/** oidc-provider's storage contract, in memory; the Client store is what tests register and revoke clients in. */
class MemoryAdapter {
  private readonly store: Store;
  constructor(name: string) {
    this.store = storeOf(name);
  }
  async upsert(id: string, payload: unknown) {
    this.store.set(id, payload);
  }
  async find(id: string) {
    return this.store.get(id);
  }
  async findByUserCode() {
    return undefined;
  }
  async findByUid() {
    return undefined;
  }
  async consume(id: string) {
    const p = this.store.get(id) as Record<string, unknown> | undefined;
    if (p) p.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string) {
    this.store.delete(id);
  }
  async revokeByGrantId() {}
}

export interface SmartServers {
  issuer: string;
  tokenUrl: string;
  fhirBaseUrl: string;
  /** Registers a client whose public key is `jwk` (alg RS384 or ES384). */
  registerClient(clientId: string, jwk: JWK): void;
  revokeClient(clientId: string): void;
  /** Every token used so far answers 401 from now on, as if expired. */
  expireTokensSeen(): void;
  /** POSTs to the token endpoint so far. */
  tokenRequests(): number;
  close(): Promise<void>;
}

/** What the authorisation server grants at most (a client asks for a subset). */
const SUPPORTED_SCOPES = [
  'system/Patient.rs',
  'system/Observation.rs',
  'system/Condition.rs',
  'system/MedicationRequest.rs',
  'system/Medication.rs',
  'system/Encounter.rs',
];

export async function startSmartServers(opts: { fhir: EmbeddedFhirServer }): Promise<SmartServers> {
  storeOf('Client').clear();
  const auth: Server = createServer();
  await new Promise<void>((resolve) => auth.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(auth.address() as AddressInfo).port}`;

  const rs: FastifyInstance = Fastify({ forceCloseConnections: true });
  rs.get('/fhir/.well-known/smart-configuration', async () => ({
    token_endpoint: `${issuer}/token`,
    token_endpoint_auth_methods_supported: ['private_key_jwt'],
    token_endpoint_auth_signing_alg_values_supported: ['RS384', 'ES384'],
    grant_types_supported: ['client_credentials'],
    scopes_supported: SUPPORTED_SCOPES,
    capabilities: ['client-confidential-asymmetric'],
  }));

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingJwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'as-1' };
  let fhirBaseUrl = '';
  let tokenPosts = 0;
  const provider = new Provider(issuer, {
    adapter: MemoryAdapter,
    jwks: { keys: [signingJwk] },
    clientAuthMethods: ['private_key_jwt'],
    enabledJWA: { clientAuthSigningAlgValues: ['RS384', 'ES384'] },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => fhirBaseUrl,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: SUPPORTED_SCOPES.join(' '),
          audience: fhirBaseUrl,
          accessTokenFormat: 'jwt',
          accessTokenTTL: 600,
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  });
  provider.use(async (ctx, next) => {
    if (ctx.method === 'POST' && ctx.path === '/token') tokenPosts++;
    await next();
  });
  auth.on('request', provider.callback());

  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  const seen = new Set<string>();
  const expired = new Set<string>();
  const deny = (reply: FastifyReply, status: number, error: string) =>
    reply
      .code(status)
      .header('www-authenticate', `Bearer error="${error}"`)
      .type('application/fhir+json')
      .send({
        resourceType: 'OperationOutcome',
        issue: [{ severity: 'error', code: status === 403 ? 'forbidden' : 'login', diagnostics: error }],
      });
  rs.addHook('onRequest', async (req, reply) => {
    if (!req.url.startsWith('/fhir/') || req.url.startsWith('/fhir/.well-known/')) return;
    const header = req.headers.authorization ?? '';
    if (!header.startsWith('Bearer ')) return deny(reply, 401, 'invalid_request');
    let claims: { jti?: string; scope?: string };
    try {
      ({ payload: claims } = await jwtVerify(header.slice(7), jwks, { issuer, audience: fhirBaseUrl }));
    } catch {
      return deny(reply, 401, 'invalid_token');
    }
    const jti = claims.jti ?? '';
    if (expired.has(jti)) return deny(reply, 401, 'invalid_token');
    seen.add(jti);
    const type = /^\/fhir\/([A-Z][A-Za-z]+)/.exec(req.url)?.[1];
    if (type && !scopesAllow((claims.scope ?? '').split(' '), type, req.method === 'GET' ? 'rs' : 'c'))
      return deny(reply, 403, 'insufficient_scope');
  });
  await rs.register(embeddedFhirPlugin, { server: opts.fhir, prefix: '/fhir' });
  const address = await rs.listen({ port: 0, host: '127.0.0.1' });
  fhirBaseUrl = `${address}/fhir`;

  return {
    issuer,
    tokenUrl: `${issuer}/token`,
    fhirBaseUrl,
    registerClient(clientId, jwk) {
      storeOf('Client').set(clientId, {
        client_id: clientId,
        token_endpoint_auth_method: 'private_key_jwt',
        token_endpoint_auth_signing_alg: jwk.alg,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        jwks: { keys: [jwk] },
      });
    },
    revokeClient(clientId) {
      storeOf('Client').delete(clientId);
    },
    expireTokensSeen() {
      for (const jti of seen) expired.add(jti);
    },
    tokenRequests: () => tokenPosts,
    async close() {
      await rs.close();
      await new Promise<void>((resolve) => auth.close(() => resolve()));
      auth.closeAllConnections();
    },
  };
}
