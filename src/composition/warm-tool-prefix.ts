// LOCAL_MODEL_WARM: the in-process model evaluates the FHIR tools' prompt prefix once at boot, in the background;
// GET /ready says not ready until it is done.
import type { FastifyBaseLogger } from 'fastify';
import type { FunctionTool } from '../vocabulary/openai/chat-request.ts';
import type { ModelUpstream } from '../model/model-upstream.ts';
import { warmPrefix } from '../model/local/warm-prefix.ts';

export interface Warming {
  /** True until the prefix is cached (or warming failed). */
  busy(): boolean;
  /** Stops warming and waits for it: the model is disposed only once nothing evaluates on it any more. */
  stop(): Promise<void>;
}

export function warmToolPrefix(o: { upstream: ModelUpstream; tools: FunctionTool[]; logger: FastifyBaseLogger }): Warming {
  const warming = new AbortController();
  let busy = true;
  const warm = warmPrefix({ upstream: o.upstream, tools: o.tools, signal: warming.signal })
    .then(
      (w) => o.logger.info(w, 'in-process model: FHIR tool prompt prefix cached'),
      (err: unknown) =>
        warming.signal.aborted || o.logger.warn({ err: (err as Error).message }, 'in-process model: warming the tool prefix failed'),
    )
    .finally(() => (busy = false));
  return {
    busy: () => busy,
    stop: async () => {
      warming.abort();
      await warm;
    },
  };
}
