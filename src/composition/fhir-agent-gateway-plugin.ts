// The gateway as a Fastify plugin: `host.register(fhirAgentGateway, { prefix: '/agent', env, tools })` serves every
// route under the prefix (/agent/v1/chat/completions, /agent/fhir/…, /agent/mcp, /agent/health, /agent/ready).
// The gateway stays its own Fastify app (its body parsers, auth guard, host policy, error envelopes and limits are
// not the host's to change), built with its routes under the prefix; the host's requests under the prefix are handed
// to it before the host reads their body. FHIR links and Locations carry the prefix.
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { createGateway, type CreateGatewayOptions } from './create-gateway.ts';

export type FhirAgentGatewayOptions = Omit<CreateGatewayOptions, 'prefix'> & {
  /** Fastify's own register option: where the gateway is mounted. Default: the root. */
  prefix?: string;
};

const plugin = async (host: FastifyInstance, opts: FhirAgentGatewayOptions): Promise<void> => {
  // Inside the plugin, host.prefix is the full mount point (a parent's prefix included).
  const prefix = host.prefix === '/' ? '' : host.prefix;
  const { prefix: _mount, ...options } = opts;
  // The host's logger unless another is given: the gateway's lines go where the host's go.
  const gateway = await createGateway({ ...options, prefix: prefix || undefined, logger: opts.logger ?? host.log });
  host.addHook('onClose', async () => gateway.close());
  // Before the host parses the body: the gateway reads it itself (strict UTF-8 JSON, its own limit). Not calling
  // done() ends the host's handling of the request here.
  host.addHook('onRequest', (req, reply) => {
    reply.hijack();
    gateway.handler(req.raw, reply.raw);
  });
  const unreachable = async () => undefined;
  host.all('/', unreachable);
  host.all('/*', unreachable);
};

/** Mount with `host.register(fhirAgentGateway, { prefix, env, tools })`. */
export const fhirAgentGateway: FastifyPluginAsync<FhirAgentGatewayOptions> = plugin;
