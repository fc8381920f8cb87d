// node-llama-cpp is an optional peer dependency: the in-process model's modules are imported only when LOCAL_MODEL
// is set, and a missing package is one LocalModelError naming what to install.
import type { loadLocalModel } from './load-local-model.ts';
import { LocalModelError } from './local-model-error.ts';

const NODE_LLAMA_CPP = 'node-llama-cpp@3.22.1';

export async function importLocalModel(
  importModule: () => Promise<{ loadLocalModel: typeof loadLocalModel }> = () => import('./load-local-model.ts'),
): Promise<typeof loadLocalModel> {
  try {
    return (await importModule()).loadLocalModel;
  } catch (err) {
    const { code, message } = err as { code?: string; message?: string };
    if (code === 'ERR_MODULE_NOT_FOUND' && message?.includes("'node-llama-cpp'")) {
      throw new LocalModelError(`LOCAL_MODEL needs the optional package node-llama-cpp: npm install ${NODE_LLAMA_CPP}`);
    }
    throw err;
  }
}
