// Who may reach a route, declared on the route itself (`config: { access }`) and read by the auth hook from the
// route fastify matched. The decision therefore follows the router's own reading of the path: `/%761/…` and
// `/v1/chat/%63ompletions` match the same routes as their plain spellings and get the same checks. Types only.

/**
 * - `key` (the default for every route that says nothing): an API key, counted by the rate limit.
 * - `chat`: as `key`, and the key needs the `chat` flag.
 * - `public`: no key (health, readiness, the OpenAPI document; /metrics checks its own token).
 */
export type RouteAccess = 'public' | 'key' | 'chat';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
}
