// Child processes of the soak, so the load generator shares an event loop with neither server.
// Usage: node --expose-gc --import tsx test/bench/soak-servers.ts <model <tokens> <paceMs> | gateway <upstreamBaseUrl>>
// Prints one line `READY <port>` once listening. The gateway answers the IPC message 'memory' with
// `process.memoryUsage()` taken after a full GC (when --expose-gc is on), so growth is retained memory, not garbage.
import { startServer } from '../../src/composition/server.ts';
import { PACED_MODEL, startPacedModel } from './paced-model-server.ts';
import { SOAK_API_KEY, SOAK_MODEL_ID } from './soak-load.ts';
import type { MemorySample } from './soak-run.ts';

async function startGateway(upstream: string): Promise<number> {
  const { port } = await startServer({
    PORT: '0',
    HOST: '127.0.0.1',
    API_KEYS: SOAK_API_KEY,
    AUDIT_SINK: 'off',
    UPSTREAM_BASE_URL: upstream,
    UPSTREAM_MODEL: PACED_MODEL,
    UPSTREAM_FLAVOUR: 'deepseek',
    // Every upstream failure counts as an error of the soak instead of being retried away.
    UPSTREAM_MAX_RETRIES: '0',
    MODEL_ID: SOAK_MODEL_ID,
    SERVER_TOOLS: 'true',
    FHIR_SEED: 'true',
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'silent',
  });
  process.on('message', (m) => {
    if (m !== 'memory') return;
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
    process.send!({ rss, heapUsed, heapTotal, external } satisfies MemorySample);
  });
  return port;
}

const [kind, a, b] = process.argv.slice(2);
const port =
  kind === 'model'
    ? (await startPacedModel({ tokens: Number(a), paceMs: Number(b) })).port
    : kind === 'gateway'
      ? await startGateway(a!)
      : NaN;
if (Number.isNaN(port)) throw new Error(`soak-servers: unknown kind ${kind}`);
process.stdout.write(`READY ${port}\n`);
