#!/usr/bin/env node
// `npx fhir-agent-gateway <command>`: runs the compiled entry point from dist/ with plain node. Paths are relative
// to this file, so it works from any working directory.
import { readFileSync } from 'node:fs';
import { URL, fileURLToPath } from 'node:url';

const COMMANDS = {
  serve: { entry: '../dist/src/composition/server.js', help: 'start the gateway (as npm start; `serve --help` lists its variables)' },
  mcp: { entry: '../dist/src/composition/mcp-stdio.js', help: 'the FHIR tools as an MCP server over stdio (logs on stderr)' },
  eval: { entry: '../dist/evals/cli.js', help: 'run, report and compare evaluations (`eval --help`)' },
  load: { entry: '../dist/src/fhir/loader/loader-cli.js', help: 'bulk-load FHIR bundles or NDJSON into a FHIR server (`load --help`)' },
  key: { entry: '../dist/scripts/create-api-key.js', help: 'create an API key for API_KEYS (`key --help`)' },
};

const [command, ...rest] = process.argv.slice(2);
if (command === '--version' || command === '-v' || command === 'version') {
  // The version of the installed package, read beside this file (not an npm script's environment).
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`${pkg.version}\n`);
  process.exit(0);
}
const chosen = Object.hasOwn(COMMANDS, command ?? '') ? COMMANDS[command] : undefined;
if (!chosen) {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(6)} ${c.help}`);
  const usage = `Usage: fhir-agent-gateway <command> [options]\n       fhir-agent-gateway --version\n\nCommands:\n${lines.join('\n')}\n`;
  const asked = command === undefined || command === '--help' || command === '-h' || command === 'help';
  if (!asked) process.stderr.write(`unknown command: ${command}\n\n`);
  (asked ? process.stdout : process.stderr).write(usage);
  process.exit(asked ? 0 : 64);
}
const entry = new URL(chosen.entry, import.meta.url);
// The entry point sees the arguments after the command, as if it had been started directly.
process.argv = [process.argv[0], fileURLToPath(entry), ...rest];
await import(entry.href);
