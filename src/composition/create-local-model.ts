// LOCAL_MODEL without UPSTREAM_BASE_URL: the model runs in this process, and nothing leaves the machine.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import { importLocalModel } from '../model/local/import-local-model.ts';
import type { LocalModel } from '../model/local/load-local-model.ts';

export async function createLocalModel(config: Config, logger: FastifyBaseLogger): Promise<LocalModel | null> {
  if (!config.LOCAL_MODEL || config.UPSTREAM_BASE_URL) return null;
  const loadLocalModel = await importLocalModel();
  const local = await loadLocalModel({
    source: config.LOCAL_MODEL,
    threads: config.LOCAL_MODEL_THREADS,
    contextSize: config.LOCAL_MODEL_CONTEXT,
    sequences: config.LOCAL_MODEL_SEQUENCES,
    maxQueue: config.LOCAL_MODEL_QUEUE,
    cacheDir: config.LOCAL_MODEL_CACHE_DIR,
    log: (message) => logger.warn({ source: 'llama.cpp' }, message),
  });
  logger.info(local.info, 'in-process model loaded');
  return local;
}
