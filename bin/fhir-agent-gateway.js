#!/usr/bin/env node
// `npx fhir-agent-gateway <command>`. The package ships TypeScript, so this registers tsx's loader (a dependency)
// and imports the entry point; paths are relative to this file, so it works from any working directory.
import { URL, fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

const COMMANDS = {
  mcp: { entry: '../src/mcp-stdio.ts', help: 'the FHIR tools as an MCP server over stdio (logs on stderr)' },
  serve: { entry: '../src/server.ts', help: 'the gateway (the same as npm start; --help lists its variables)' },
};

const [command, ...rest] = process.argv.slice(2);
const chosen = COMMANDS[command];
if (!chosen) {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(6)} ${c.help}`);
  process.stderr.write(`usage: fhir-agent-gateway <command>\n\n${lines.join('\n')}\n`);
  process.exit(command === undefined || command === '--help' || command === '-h' ? 0 : 64);
}
register();
// The entry point sees the arguments after the command, as if it had been started directly.
process.argv = [process.argv[0], fileURLToPath(new URL(chosen.entry, import.meta.url)), ...rest];
await import(chosen.entry);
