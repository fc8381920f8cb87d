// POST /mcp: MCP over streamable HTTP, stateless. Every POST gets a fresh server and transport for the caller the
// auth hook named (its key's scopes decide the tools it sees and what they may read), so no session outlives a
// request and nothing is shared between keys. JSON responses, not SSE: the tools answer once and send no progress.
// The SDK's web-standard transport rather than its Node one: it returns a Response that fastify sends, so the
// request keeps fastify's hooks (x-request-id, the request log) and error handler instead of a hijacked socket.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { KeyAccess } from '../../policies/auth/key-access.ts';
import { ApiError } from '../../vocabulary/openai/api-error.ts';

export interface McpRouteOptions {
  /** A server offering this caller's tools. */
  serverFor(access: KeyAccess): Promise<Server>;
  /**
   * Most tools/call requests in one POST (a JSON-RPC batch): one request is one step of the rate limit, so a batch
   * may not run more tools than a chat request may (AGENT_MAX_TOOL_CALLS).
   */
  maxToolCalls: number;
  /**
   * Whether a browser page of this Origin may drive the tools (the MCP spec's DNS-rebinding defence): the host
   * policy's list (loopback, ALLOWED_HOSTS, PUBLIC_BASE_URL), never the request's own Host, which a rebinding
   * page controls.
   */
  allowsOrigin(origin: string): boolean;
}

/** Without sessions there is no stream to open (GET) or session to end (DELETE); the SDK client expects 405. */
const STATELESS = {
  jsonrpc: '2.0',
  error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; POST JSON-RPC messages to /mcp.' },
  id: null,
};

function toWebRequest(req: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  // The body was parsed by fastify (its limit and JSON errors apply) and goes to the transport as parsedBody.
  return new Request(`${req.protocol}://${req.host}${req.url}`, { method: req.method, headers });
}

const isToolCall = (m: unknown): boolean => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'tools/call';

async function handlePost(req: FastifyRequest, reply: FastifyReply, o: McpRouteOptions): Promise<FastifyReply> {
  // The auth hook sets keyAccess on /mcp (the anonymous sandbox's on a keyless loopback gateway); without it, nothing.
  if (!req.keyAccess) {
    throw new ApiError(401, 'No API key was checked for this request.', {
      code: 'invalid_api_key',
      headers: { 'www-authenticate': 'Bearer' },
    });
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !o.allowsOrigin(origin)) {
    // The SDK transport's own answer to a foreign Origin, so clients see one shape whoever refuses.
    return reply.code(403).send({ jsonrpc: '2.0', error: { code: -32000, message: `Invalid Origin header: ${origin}` }, id: null });
  }
  const calls = Array.isArray(req.body) ? req.body.filter(isToolCall).length : 0;
  if (calls > o.maxToolCalls) {
    const message = `Invalid Request: at most ${o.maxToolCalls} tools/call requests per batch (this one has ${calls}); send them in several POSTs.`;
    return reply.code(400).send({ jsonrpc: '2.0', error: { code: -32600, message }, id: null });
  }
  const server = await o.serverFor(req.keyAccess);
  // Imported on the first request, with the rest of the SDK (mcp-server-factory.ts).
  const { WebStandardStreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js');
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  // A client that hangs up aborts the tool calls still running (closing the server aborts their signals).
  const hungUp = () => void (reply.raw.writableFinished || server.close());
  reply.raw.once('close', hungUp);
  try {
    await server.connect(transport);
    const response = await transport.handleRequest(toWebRequest(req), { parsedBody: req.body });
    const body = await response.text();
    reply.code(response.status);
    response.headers.forEach((value, name) => void reply.header(name, value));
    return reply.send(body === '' ? undefined : body);
  } finally {
    reply.raw.off('close', hungUp);
    await server.close();
  }
}

export async function mcpRoute(app: FastifyInstance, o: McpRouteOptions): Promise<void> {
  app.post('/mcp', (req, reply) => handlePost(req, reply, o));
  const notAllowed = async (_req: FastifyRequest, reply: FastifyReply) => reply.code(405).header('allow', 'POST').send(STATELESS);
  app.get('/mcp', notAllowed);
  app.delete('/mcp', notAllowed);
}
