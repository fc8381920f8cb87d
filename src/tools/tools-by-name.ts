// The built-in tools typed by name, for code that calls them directly: `toolsByName.search_observations.execute(
// { patient: 'S1' }, ctx)` checks the input against the tool's schema type at compile time (a misspelt field does
// not compile) and again at run time, and a tool with an outputSchema types its result's content.
import type { z } from 'zod';
import { runTool } from './run-tool.ts';
import { builtInTools } from './tool-registry.ts';
import type { ToolContext, ToolDefinition, ToolResultOf } from './kit/tool.ts';

/** A tool called directly: the input as a caller writes it (defaults optional), parsed before it runs. */
export type TypedTool<S extends z.ZodObject, O extends z.ZodType> = Omit<ToolDefinition<S, O>, 'execute'> & {
  /** Validates `input` (a failure is `invalid_arguments`, naming the fields), then runs the tool. Never throws. */
  execute(input: z.input<S>, ctx: ToolContext): Promise<ToolResultOf<z.output<O>>>;
};

type Typed<T> = T extends ToolDefinition<infer S, infer O> ? TypedTool<S, O> : never;

function typed<S extends z.ZodObject, O extends z.ZodType>(tool: ToolDefinition<S, O>): TypedTool<S, O> {
  return {
    ...tool,
    execute: (input, ctx) => runTool(tool as unknown as ToolDefinition, input, ctx) as Promise<ToolResultOf<z.output<O>>>,
  };
}

export const toolsByName = Object.fromEntries(
  Object.entries(builtInTools).map(([name, tool]) => [name, typed(tool as unknown as ToolDefinition)]),
) as { readonly [K in keyof typeof builtInTools]: Typed<(typeof builtInTools)[K]> };
