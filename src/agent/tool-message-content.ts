// The one form of a tool's answer as text: the whole ToolResult as compact JSON (`{"ok":true,"content":…}` or
// `{"ok":false,"error":{…}}`). The chat loop's tool messages, the eval harness's (it runs the same loop) and MCP's
// text block all read the same, so a model sees one shape whichever way its tools were called.
import type { ToolResult } from './tool-contract.ts';

export function toolMessageContent(result: ToolResult): string {
  return JSON.stringify(result);
}
