// The only file that listens: config → logger → composeGateway → listen, and a graceful close.
import { pathToFileURL } from 'node:url';
import { composeGateway } from './compose-gateway.ts';
import { createLogger } from './create-logger.ts';
import { ConfigError, configHelp, loadConfig } from './config.ts';
import { PortInUseError, assertPortFree, toPortError } from '../shared/assert-port-free.ts';
import { LocalModelError } from '../model/local/local-model-error.ts';
import { EhrDirectoryError } from '../fhir/loader/read-ehr-bundles.ts';
import { ToolsModuleError } from './load-tools-module.ts';

export interface RunningServer {
  port: number;
  baseUrl: string;
  close(): Promise<void>;
}

export async function startServer(env: Record<string, string | undefined>): Promise<RunningServer> {
  const config = loadConfig(env);
  // Before anything slow (seeding, a model load): a taken port is one line and exit 78, not a crash after a minute.
  await assertPortFree(config.HOST, config.PORT);
  const logger = createLogger(config);
  if (!config.authEnabled) logger.warn({ host: config.HOST }, 'API_KEYS is not set: authentication is OFF (allowed on loopback only)');
  const { app, agent, close } = await composeGateway({ config, logger });
  if (!agent) {
    logger.info(
      'no model connected: set UPSTREAM_BASE_URL, e.g. UPSTREAM_BASE_URL=http://127.0.0.1:11434/v1 UPSTREAM_MODEL=qwen3:8b (Ollama) or http://127.0.0.1:8000/v1 (vLLM), or LOCAL_MODEL=<file.gguf> to run a model in process; chat requests answer 503 until then',
    );
  }
  try {
    await app.listen({ port: config.PORT, host: config.HOST });
  } catch (err) {
    await close();
    throw toPortError(err, config.HOST, config.PORT);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  return {
    port,
    baseUrl: `http://${host}:${port}`,
    close,
  };
}

/** `--flag <value>` (or `--flag=<value>`), or undefined when absent. */
function flagValue(argv: string[], flag: string, needs: string): string | undefined {
  const at = argv.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
  if (at < 0) return undefined;
  const value = argv[at].startsWith(`${flag}=`) ? argv[at].slice(flag.length + 1) : argv[at + 1];
  if (!value || value.startsWith('--')) throw new ConfigError(`${flag} needs ${needs}`);
  return value;
}

/** `--ehr <dir>` is FHIR_SEED_DIR and `--tools <module>` TOOLS_MODULE for this run. */
function flags(argv: string[]): { FHIR_SEED_DIR?: string; TOOLS_MODULE?: string } {
  const dir = flagValue(argv, '--ehr', 'a folder of FHIR bundles or NDJSON');
  const tools = flagValue(argv, '--tools', 'a JavaScript module exporting tools (defineTool)');
  return { ...(dir ? { FHIR_SEED_DIR: dir } : {}), ...(tools ? { TOOLS_MODULE: tools } : {}) };
}

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(
      `Usage: fhir-agent-gateway serve [--ehr <dir>] [--tools <module>]\n` +
        `  --ehr <dir>        seed the embedded FHIR server from a folder of bundles or NDJSON (sets FHIR_SEED_DIR)\n` +
        `  --tools <module>   add the tools a module exports by default (defineTool; sets TOOLS_MODULE)\n\n` +
        `Other commands: fhir-agent-gateway mcp | eval | load | key; --help on each. (In a checkout: npm start -- <options>.)\n\n` +
        `${configHelp()}\n`,
    );
    return;
  }
  let server: RunningServer;
  try {
    server = await startServer({ ...process.env, ...flags(process.argv.slice(2)) });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message} (run with --help for every variable)\n`);
      process.exit(78);
    }
    if (err instanceof PortInUseError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78);
    }
    if (err instanceof ToolsModuleError) {
      process.stderr.write(`tools error: ${err.message}\n`);
      process.exit(78);
    }
    if (err instanceof EhrDirectoryError) {
      process.stderr.write(`seed error: ${err.message}\n`);
      process.exit(78);
    }
    if (err instanceof LocalModelError) {
      process.stderr.write(`model error: ${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
  const stop = (signal: string) => {
    process.stderr.write(`${signal}: closing\n`);
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

// Not awaited at the top level: a module with top-level await cannot be require()d, and the package entry imports
// this one (CommonJS consumers on Node 20.19+ and 22.12+ load the package with require()).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
