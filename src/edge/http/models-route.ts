// GET /v1/models and /v1/models/:id list the one public model id.
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../vocabulary/openai/api-error.ts';

export async function modelsRoutes(app: FastifyInstance, o: { modelId: string; created: number }): Promise<void> {
  const model = { id: o.modelId, object: 'model', created: o.created, owned_by: o.modelId.split('/')[0] };
  app.get('/v1/models', async () => ({ object: 'list', data: [model] }));
  app.get<{ Params: { '*': string } }>('/v1/models/*', async (req) => {
    if (req.params['*'] !== o.modelId) {
      throw new ApiError(404, `The model '${req.params['*']}' does not exist or you do not have access to it.`, {
        param: 'model',
        code: 'model_not_found',
      });
    }
    return model;
  });
}
