// A generated EHR served over real HTTP on loopback at /fhir/ with no key and no rate limit: what `eval ehr serve`
// runs, and what a `--protocol medagentbench` run without --fhir-base-url starts for the model's GETs, so the
// benchmark's protocol always talks HTTP to a FHIR base as it does to the benchmark's Docker image. Built by the
// gateway's composition root (the embedded store), with no model: its chat route answers 503.
import type { Bundle } from '@medplum/fhirtypes';
import { pino } from 'pino';
import { composeGateway } from '../../src/composition/compose-gateway.ts';
import { loadConfig } from '../../src/composition/config.ts';

export interface ServedEhr {
  /** `http://127.0.0.1:<port>/fhir/`, with the trailing slash the benchmark's api_base has. */
  baseUrl: string;
  close(): Promise<void>;
}

export async function serveEhr(opts: {
  bundles: () => Promise<Bundle[]>;
  port?: number;
  /** TOOLS_MODULE: a deployment's own tools on this gateway's /mcp beside the built-ins, as `serve` has them. */
  toolsModule?: string;
}): Promise<ServedEhr> {
  const gateway = await composeGateway({
    config: loadConfig({
      HOST: '127.0.0.1',
      PORT: String(opts.port ?? 0),
      FHIR_SEED: 'true',
      LOG_LEVEL: 'silent',
      AUDIT_SINK: 'off',
      RATE_LIMIT_PER_MINUTE: '0',
      TOOLS_MODULE: opts.toolsModule,
    }),
    logger: pino({ level: 'silent' }),
    seed: opts.bundles,
  });
  try {
    const address = await gateway.app.listen({ port: opts.port ?? 0, host: '127.0.0.1' });
    return {
      baseUrl: `${address}/fhir/`,
      close: async () => {
        const closing = gateway.close();
        // Clients' keep-alive sockets would hold close() for the server's keep-alive timeout (72 s in fastify).
        gateway.app.server.closeAllConnections();
        await closing;
      },
    };
  } catch (err) {
    await gateway.close();
    throw err;
  }
}
