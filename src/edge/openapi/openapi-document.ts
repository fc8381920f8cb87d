// GET /openapi.json: an OpenAPI 3.1 document generated from the zod schemas the gateway validates and answers with
// (z.toJSONSchema, JSON Schema 2020-12 as OpenAPI 3.1 uses it). The request schema is the input side (what a
// client may send, defaults optional); responses are the output side.
import { z } from 'zod';
import { agentTraceSchema, agentTraceEventSchema } from '../../agent/agent-trace-schema.ts';
import { chatCompletionSchemas, usageSchema } from '../../vocabulary/openai/chat-completion-schema.ts';
import { chatRequestSchema } from '../../vocabulary/openai/chat-request.ts';
import { errorEnvelopeSchema } from '../../vocabulary/openai/error-envelope.ts';
import { readinessReportSchema } from '../readiness/readiness-report-schema.ts';
import { healthSchema, modelListSchema, modelSchema } from './service-schemas.ts';

type Json = Record<string, unknown>;

const { chatCompletionSchema, chatCompletionChunkSchema } = chatCompletionSchemas({
  trace: agentTraceSchema,
  event: agentTraceEventSchema,
});

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Json, description: string) => ({ description, content: { 'application/json': { schema } } });
const error = (description: string) => json(ref('ErrorEnvelope'), description);

/** Each registry becomes a set of named component schemas that refer to each other by $ref. */
function components(io: 'input' | 'output', named: Record<string, z.ZodType>): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(named)) registry.add(schema, { id });
  const out = z.toJSONSchema(registry, { io, target: 'draft-2020-12', uri: (id) => `#/components/schemas/${id}` }) as {
    schemas: Record<string, Json>;
  };
  for (const s of Object.values(out.schemas)) {
    delete s.$schema;
    delete s.$id;
  }
  return out.schemas;
}

export function buildOpenApiDocument(o: { modelId: string; version: string }): Json {
  // The model field names the one id this gateway serves: anything else is a 404 model_not_found.
  const request = chatRequestSchema.extend({
    model: z.literal(o.modelId).describe(`The one model this gateway serves (MODEL_ID).`),
  });
  const schemas = {
    ...components('input', { ChatCompletionRequest: request }),
    ...components('output', {
      ChatCompletion: chatCompletionSchema,
      ChatCompletionChunk: chatCompletionChunkSchema,
      Usage: usageSchema,
      FhirAgent: agentTraceSchema,
      FhirAgentEvent: agentTraceEventSchema,
      ErrorEnvelope: errorEnvelopeSchema,
      Model: modelSchema,
      ModelList: modelListSchema,
      Health: healthSchema,
      Readiness: readinessReportSchema,
    }),
  };
  const authErrors = {
    '401': error('No API key, or an unknown one.'),
    '403': error('The key may not do this (e.g. it lacks the "chat" flag).'),
    '429': error('Rate limit reached: see Retry-After.'),
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'fhir-agent-gateway',
      version: o.version,
      description:
        'OpenAI-compatible chat completions with server-side FHIR tools (the `fhir_agent` extension field). Research tool: synthetic data only.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths: {
      '/v1/chat/completions': {
        post: {
          operationId: 'createChatCompletion',
          summary: 'Chat completion, with the FHIR tools run server-side unless `server_tools` is false.',
          requestBody: { required: true, content: { 'application/json': { schema: ref('ChatCompletionRequest') } } },
          responses: {
            '200': {
              description:
                'A completion; with `stream: true`, server-sent events of `data: <ChatCompletionChunk>` ending in `data: [DONE]`.',
              content: {
                'application/json': { schema: ref('ChatCompletion') },
                // OpenAPI 3.1 has no itemSchema (3.2 does): `schema` describes one event, as tools read it.
                'text/event-stream': {
                  schema: {
                    type: 'object',
                    required: ['data'],
                    properties: {
                      data: {
                        description: 'A ChatCompletionChunk as JSON; the last event is `[DONE]`.',
                        oneOf: [
                          { type: 'string', contentMediaType: 'application/json', contentSchema: ref('ChatCompletionChunk') },
                          { type: 'string', const: '[DONE]' },
                        ],
                      },
                    },
                  },
                },
              },
            },
            '400': error('The request is invalid; `param` names the field.'),
            ...authErrors,
            '404': error('The model is not the one this gateway serves.'),
            '413': error('The body is larger than BODY_LIMIT_BYTES.'),
            '415': error('The body is not JSON.'),
            '502': error('The model upstream failed or answered something unusable.'),
            '503': error('No model is connected, or the upstream is overloaded.'),
            '504': error('The request did not complete within the deadline.'),
          },
        },
      },
      '/v1/models': {
        get: {
          operationId: 'listModels',
          summary: 'The one model this gateway serves.',
          responses: { '200': json(ref('ModelList'), 'The model list.'), ...authErrors },
        },
      },
      '/v1/models/{model}': {
        get: {
          operationId: 'retrieveModel',
          parameters: [{ name: 'model', in: 'path', required: true, schema: { type: 'string' }, description: 'A model id.' }],
          responses: {
            '200': json(ref('Model'), 'The model.'),
            ...authErrors,
            '404': error('No such model.'),
          },
        },
      },
      '/health': {
        get: {
          operationId: 'health',
          security: [],
          responses: { '200': json(ref('Health'), 'The process is up.') },
        },
      },
      '/ready': {
        get: {
          operationId: 'ready',
          security: [],
          responses: {
            '200': json(ref('Readiness'), 'Every component is ok.'),
            '503': json(ref('Readiness'), 'Some component is failing; `components` says which.'),
          },
        },
      },
      '/metrics': {
        get: {
          operationId: 'metrics',
          summary: 'Prometheus text (METRICS=true): METRICS_TOKEN as a bearer token when set, else loopback clients only.',
          security: [{ metricsToken: [] }, {}],
          responses: {
            '200': { description: 'Prometheus exposition format.', content: { 'text/plain': { schema: { type: 'string' } } } },
            '401': error('METRICS_TOKEN is set and was not presented.'),
            '403': error('No METRICS_TOKEN is set and the client is not on loopback.'),
          },
        },
      },
      '/openapi.json': {
        get: {
          operationId: 'openapi',
          security: [],
          responses: { '200': { description: 'This document.', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
    },
    components: {
      schemas,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key (API_KEYS or API_KEYS_FILE). Not needed when auth is off (loopback, no keys).',
        },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN.' },
      },
    },
  };
}
