// The package's public surface. `composeGateway` builds the gateway, with its own model, FHIR client, tools or
// seed data if an embedder passes them; the tools themselves are re-exported from src/tools/index.ts.
export { buildApp, type AppDeps } from './composition/app.ts';
export { configHelp, loadConfig, ConfigError, type Config } from './composition/config.ts';
export {
  composeGateway,
  fhirTools,
  syntheticEhrBundles,
  type ComposeGatewayOptions,
  type ComposedGateway,
} from './composition/compose-gateway.ts';
export { createModelUpstream } from './composition/create-model-upstream.ts';
export type { ChatAgent } from './agent/chat-agent.ts';
export { startServer } from './composition/server.ts';
export { fhirAgentGateway, type FhirAgentGatewayOptions } from './composition/fhir-agent-gateway-plugin.ts';
export { createGateway, type CreateGatewayOptions, type Gateway } from './composition/create-gateway.ts';
export { createChatAgent, type ChatAgentOptions } from './agent/create-chat-agent.ts';
export type { AgentTrace, TraceToolCall, StopReason } from './agent/agent-trace-schema.ts';
export type { ExecuteToolFn, ServerTools, ToolContext, ToolResult, WrittenResource } from './agent/tool-contract.ts';
export { createOpenAiCompatibleUpstream } from './model/openai-compatible-upstream.ts';
export type { ModelUpstream, ChatParams, UpstreamCompletion, UpstreamDelta } from './model/model-upstream.ts';
export { createMedplumFhirClient } from './fhir/client/medplum-fhir-client.ts';
export type { FhirClient } from './fhir/client/fhir-client.ts';
export { createEmbeddedFhirServer, type EmbeddedFhirServer } from './fhir/server/embedded-fhir-server.ts';
export { embeddedFhirPlugin } from './fhir/server/embedded-fhir-plugin.ts';
export {
  defineTool,
  executeTool,
  openAiToolDefinitions,
  renderToolsMarkdownTable,
  toolJsonSchema,
  toolRegistry,
  tools,
  toolsByName,
  type ToolDefinition,
} from './tools/index.ts';
