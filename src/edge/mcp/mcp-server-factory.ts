// MCP servers (the SDK's low-level `Server`) offering one caller's FHIR tools. The tool list is the caller's OpenAI
// function definitions, which src/tools/ generates from each tool's zod input: the MCP name, description and
// inputSchema are those, not a second copy. A call runs through the same executeTool as the agent loop, with the
// caller's scoped (and audited) FHIR client, and answers the same compact JSON the model reads in its tool message.
// Low-level rather than McpServer: McpServer validates arguments itself against zod shapes; here executeTool does,
// so a bad argument is judged by the same schema (naming the field) on every path.
// By the specification (2025-06-18): a tool that declares its result has an outputSchema and answers
// structuredContent (the JSON text block kept for older clients); an unknown tool or arguments that do not fit the
// inputSchema are the caller's protocol error, JSON-RPC -32602; anything the tool itself met is an `isError` result.
// The SDK (with Ajv, ~180 ms and ~8 MB) is imported on the first MCP request, not at boot: most gateways never get one.
import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { packageInfo as pkg } from '../../shared/package-info.ts';
import type { ServerTools, ToolResult, ToolSession, ToolSessionScope } from '../../agent/tool-contract.ts';
import { toolMessageContent } from '../../agent/tool-message-content.ts';
import type { KeyAccess } from '../../policies/auth/key-access.ts';

export interface McpServerFactoryOptions {
  tools: ServerTools;
  /** One caller's tool session (the access control's): the tools offered, run with its scoped and audited client. */
  toolSession(access: KeyAccess, scope: ToolSessionScope): ToolSession;
  /** Ids of tool calls, which write tools turn into their idempotency key. */
  generateCallId?: () => string;
  /** Tool name → the JSON Schema (type object) of its success's content, for tools that declare one. */
  outputSchemas?: ReadonlyMap<string, Record<string, unknown>>;
}

/** A tools/call `_meta` key: the same value on a retried write call makes it the same write (created once). */
export const IDEMPOTENCY_META = 'fhir-agent-gateway/idempotency-key';
const MAX_IDEMPOTENCY_KEY = 256;

const INSTRUCTIONS =
  'FHIR R4 tools over a synthetic EHR (research use only, no real patient data). Find a patient first (find_patients), ' +
  'then search their records by patient id. Results are compact JSON: {"ok":true,"content":…} or ' +
  '{"ok":false,"error":{"code","message","details"}}, where details names the arguments to fix.';

/** The same string the agent loop sends the model as the tool message; a failure is flagged, not thrown. */
const answer = (result: ToolResult, structured: boolean): CallToolResult => ({
  content: [{ type: 'text', text: toolMessageContent(result) }],
  ...(structured && result.ok ? { structuredContent: result.content as Record<string, unknown> } : {}),
  isError: !result.ok,
});

/**
 * Failures that are the caller's protocol error rather than the tool's: no such tool (for this caller), or arguments
 * its inputSchema refuses. A `continuation` the tool itself cannot use is the tool's answer, not a schema error.
 */
const callerError = (result: ToolResult): boolean =>
  !result.ok &&
  (result.error.code === 'unknown_tool' || (result.error.code === 'invalid_arguments' && Array.isArray(result.error.details)));

async function loadSdk() {
  const [{ Server }, { AjvJsonSchemaValidator }, { CallToolRequestSchema, ListToolsRequestSchema, McpError, ErrorCode }] =
    await Promise.all([
      import('@modelcontextprotocol/sdk/server/index.js'),
      import('@modelcontextprotocol/sdk/validation/ajv'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]);
  // A Server makes its own Ajv instance unless given one: a millisecond per request, for a validator these servers
  // never use (it checks elicitation answers). One for all of them.
  return { Server, jsonSchemaValidator: new AjvJsonSchemaValidator(), CallToolRequestSchema, ListToolsRequestSchema, McpError, ErrorCode };
}

/** A function that builds one caller's MCP server, not yet connected to a transport. */
export function mcpServerFactory(o: McpServerFactoryOptions): (access: KeyAccess) => Promise<Server> {
  // A random id per call, not the JSON-RPC id: clients restart their ids at 0 on every connection, and a write
  // whose idempotency key repeated another connection's would be taken for a retry of it. A client that retries
  // names the call itself, in `_meta` (IDEMPOTENCY_META).
  const generateCallId = o.generateCallId ?? (() => `mcp-${randomUUID()}`);
  let sdk: ReturnType<typeof loadSdk> | undefined;
  const readOnly = new Set(o.tools.definitions({ writesEnabled: false }).map((d) => d.function.name));
  const toMcpTool = ({ function: f }: ToolSession['definitions'][number]): Tool => ({
    name: f.name,
    description: f.description,
    inputSchema: f.parameters as Tool['inputSchema'],
    ...(o.outputSchemas?.has(f.name) ? { outputSchema: o.outputSchemas.get(f.name) as Tool['outputSchema'] } : {}),
    annotations: readOnly.has(f.name)
      ? { readOnlyHint: true, openWorldHint: false }
      : { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  });

  return async (access) => {
    const { Server, jsonSchemaValidator, CallToolRequestSchema, ListToolsRequestSchema, McpError, ErrorCode } = await (sdk ??= loadSdk());
    // Writes over MCP are retried by naming the call (IDEMPOTENCY_META), within this caller's MCP calls.
    const session = o.toolSession(access, { idempotencyScope: (callerId) => `mcp\u0000${callerId}` });
    const server = new Server(
      { name: pkg.name, version: pkg.version },
      { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS, jsonSchemaValidator },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: session.definitions.map(toMcpTool) }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      const { name, arguments: args, _meta } = request.params;
      const named = _meta?.[IDEMPOTENCY_META];
      if (named !== undefined && (typeof named !== 'string' || named.length === 0 || named.length > MAX_IDEMPOTENCY_KEY)) {
        const message = `must be a string of 1 to ${MAX_IDEMPOTENCY_KEY} characters`;
        throw new McpError(ErrorCode.InvalidParams, `_meta["${IDEMPOTENCY_META}"] ${message}`, [
          { path: `_meta.${IDEMPOTENCY_META}`, message },
        ]);
      }
      // Never throws: an unknown tool, a hidden write tool, bad arguments or a refused read is a result; the
      // caller's errors among them become JSON-RPC errors here.
      const call = { id: named ?? generateCallId(), type: 'function' as const, function: { name, arguments: JSON.stringify(args ?? {}) } };
      const result: ToolResult = await session.execute(call, { signal: extra.signal });
      if (callerError(result) && !result.ok) throw new McpError(ErrorCode.InvalidParams, result.error.message, result.error.details);
      return answer(result, o.outputSchemas?.has(name) ?? false);
    });
    return server;
  };
}
