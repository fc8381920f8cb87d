// TOOLS_MODULE (`serve --tools <module>`): a deployment's own tools, loaded at boot. The module's default export is
// an array of tools (defineTool) or a function of the configuration returning one (or a promise of one). Whatever
// goes wrong is one ToolsModuleError naming the module, which the server turns into one line and exit 78.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Config } from './config.ts';

export class ToolsModuleError extends Error {
  override name = 'ToolsModuleError';
}

/** A path (relative to the working directory) or, when no such file exists, a package name. */
function specifierOf(module: string, cwd: string): string {
  const file = path.resolve(cwd, module);
  return existsSync(file) ? pathToFileURL(file).href : module;
}

const firstLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n', 1)[0];

export async function loadToolsModule(module: string, config: Config, cwd = process.cwd()): Promise<unknown[]> {
  let loaded: { default?: unknown };
  try {
    loaded = (await import(specifierOf(module, cwd))) as { default?: unknown };
  } catch (err) {
    throw new ToolsModuleError(`TOOLS_MODULE ${module} did not load: ${firstLine(err)}`);
  }
  let tools = loaded.default;
  if (typeof tools === 'function') {
    try {
      tools = await (tools as (config: Config) => unknown)(config);
    } catch (err) {
      throw new ToolsModuleError(`TOOLS_MODULE ${module}: its default export (a function) failed: ${firstLine(err)}`);
    }
  }
  if (!Array.isArray(tools)) {
    throw new ToolsModuleError(
      `TOOLS_MODULE ${module} must export by default an array of tools (defineTool) or a function returning one; it exports ${tools === undefined ? 'no default' : typeof tools}`,
    );
  }
  return tools;
}
