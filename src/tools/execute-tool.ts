// Runs one model tool call on the built-in tools. Never throws: every failure is a ToolResult the model can read
// and correct. A gateway with tools of its own runs them through its catalogue (tool-catalogue.ts) instead.
import { createToolCatalogue } from './tool-catalogue.ts';
import type { ToolContext, ToolResult } from './kit/tool.ts';

const builtIn = createToolCatalogue();

export function executeTool(name: string, argsJson: string, ctx: ToolContext): Promise<ToolResult> {
  return builtIn.execute(name, argsJson, ctx);
}
