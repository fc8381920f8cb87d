// The tool table of docs/tools.md, generated so it cannot drift from the schemas.
import { toOpenAiTool } from './openai-tool-definitions.ts';
import { toolRegistry } from './tool-registry.ts';

const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');

export function renderToolsMarkdownTable(): string {
  const rows = [...toolRegistry.values()].map((tool) => {
    const { properties, required } = toOpenAiTool(tool).function.parameters;
    const params = Object.keys(properties)
      .map((p) => (required.includes(p) ? `\`${p}\`` : `\`${p}?\``))
      .join(', ');
    return `| \`${tool.name}\` | ${tool.write ? 'write' : 'read'} | ${cell(tool.description)} | ${params} |`;
  });
  return ['| name | kind | description | parameters |', '| --- | --- | --- | --- |', ...rows].join('\n') + '\n';
}
