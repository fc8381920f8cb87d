// Entry point of `npm run -s mcp` and `npx fhir-agent-gateway mcp`: the FHIR tools as an MCP server over stdio,
// for an MCP client that starts it as a child process. Stdout carries only MCP messages; logs go to stderr.
// The FHIR server is FHIR_BASE_URL, or else the embedded one, seeded with the synthetic EHR in this process. No
// model is loaded (UPSTREAM_BASE_URL and LOCAL_MODEL are ignored): the client's own model calls the tools.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { pino } from 'pino';
import { plainKeyAccess } from '../policies/auth/key-access.ts';
import { composeGateway } from './compose-gateway.ts';
import { ConfigError, loadConfig } from './config.ts';

/** Who the audit names for calls made over stdio. */
const STDIO_KEY_ID = 'stdio';

const USAGE = `Usage: fhir-agent-gateway mcp   (in a checkout: npm run -s mcp)
The FHIR tools as an MCP server over stdio, for an MCP client that starts this as a child process. Stdout carries
only MCP messages; logs go to stderr. The FHIR server is FHIR_BASE_URL, else the embedded one seeded with the
synthetic EHR. Writes need FHIR_WRITE_TOOLS=true. No model is loaded. \`fhir-agent-gateway serve --help\` lists every variable.`;

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  let config;
  try {
    // Nothing listens, so HOST's keys-off-loopback rule does not apply.
    config = loadConfig({ ...process.env, HOST: '127.0.0.1', UPSTREAM_BASE_URL: undefined, LOCAL_MODEL: undefined });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`configuration error: ${err.message} (run \`fhir-agent-gateway serve --help\` for every variable)\n`);
    process.exit(78);
  }
  // The stdio caller is whoever started the process, with a plain key's rights (writes with FHIR_WRITE_TOOLS=true).
  // Its calls are audited where AUDIT_SINK says; unset means off, as on a keyless gateway (a client may start this
  // in any working directory, where a default audit/ file would be a surprise).
  config = { ...config, auditSink: config.AUDIT_SINK ?? 'off' };
  // Synchronous: the last lines before process.exit are not lost, and a stdio server logs little.
  const logger = pino({ level: config.LOG_LEVEL, base: { mode: 'mcp-stdio' } }, pino.destination({ dest: 2, sync: true }));
  const gateway = await composeGateway({ config, logger });
  const server = await gateway.mcpServerFor(plainKeyAccess(STDIO_KEY_ID, { writes: config.FHIR_WRITE_TOOLS }));

  const transport = new StdioServerTransport();
  // Requests still being answered when stdin ends (a script that pipes requests in and closes) are answered
  // before the process exits; nothing else keeps it alive.
  const pending = new Set<string | number>();
  let ended = false;
  let closing: Promise<void> | undefined;
  const shutdown = (why: string) =>
    (closing ??= (async () => {
      logger.info({ why }, 'MCP stdio server closing');
      await server.close();
      await gateway.close();
      process.exit(0);
    })());
  const drained = () => ended && pending.size === 0 && void shutdown('stdin closed');
  process.stdin.once('end', () => {
    ended = true;
    // The last chunk's requests start their handlers in this same turn; count them first.
    setImmediate(drained);
  });
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));

  await server.connect(transport);
  const receive = transport.onmessage!;
  transport.onmessage = (message) => {
    if ('method' in message && 'id' in message) pending.add(message.id);
    receive(message);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message) => {
    await send(message);
    if (!('method' in message) && 'id' in message && message.id !== undefined && pending.delete(message.id)) drained();
  };
  logger.info(
    { fhir: config.FHIR_BASE_URL ?? 'embedded', writes: config.FHIR_WRITE_TOOLS, audit: config.auditSink },
    'MCP stdio server ready',
  );
}

await main();
