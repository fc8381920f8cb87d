// The FHIR tools' public surface: the agent loop, the eval harness and the README use only this module.
export { executeTool } from './execute-tool.ts';
export { searchCapabilitiesOf, type SearchCapabilities } from '../src/fhir-client/search-capabilities-of.ts';
export { serverToolsFor, unavailableReason } from './server-tools-for.ts';
export { toolsForScopes } from './tools-for-scopes.ts';
export { openAiToolDefinitions, tools, toOpenAiTool, type OpenAiTool } from './openai-tool-definitions.ts';
export { renderToolsMarkdownTable } from './render-tools-markdown-table.ts';
export { toolRegistry } from './tool-registry.ts';
export type { ToolContext, ToolDefinition, ToolResult, WrittenResource } from './tool.ts';
