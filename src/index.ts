// The package's public surface. `tools` (the OpenAI tool definitions) and the handler registry come from
// tools/index.ts; the rest lets an embedder build the gateway around its own upstream or FHIR client.
export { buildApp, type AppDeps } from './app.ts';
export { configHelp, loadConfig, ConfigError, type Config } from './config.ts';
export { createGatewayDeps, createModelUpstream, type GatewayDeps } from './gateway-deps.ts';
export { startServer } from './server.ts';
export { createAgentUpstream, type AgentUpstreamOptions } from './agent/create-agent-upstream.ts';
export type { AgentAudit, AuditToolCall, StopReason } from './agent/agent-audit.ts';
export { createOpenAiCompatibleUpstream } from './upstream/openai-compatible-upstream.ts';
export type { ModelUpstream, ChatParams, UpstreamCompletion, UpstreamDelta } from './upstream/model-upstream.ts';
export { createMedplumFhirClient } from './fhir/medplum-fhir-client.ts';
export type { FhirClient } from './fhir/fhir-client.ts';
export { createEmbeddedFhirServer, type EmbeddedFhirServer } from './fhir/embedded/embedded-fhir-server.ts';
export { embeddedFhirPlugin } from './fhir/embedded/embedded-fhir-plugin.ts';
export { executeTool, openAiToolDefinitions, renderToolsMarkdownTable, toolRegistry, tools } from '../tools/index.ts';
