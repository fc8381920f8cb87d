// The HTTP edge's one error currency as a schema: OpenAI's `{"error":{"message","type","param","code"}}`.
import { z } from 'zod';

export const apiErrorTypeSchema = z.enum([
  'invalid_request_error',
  'authentication_error',
  'rate_limit_error',
  'server_error',
  'not_found_error',
]);

export const errorEnvelopeSchema = z.object({
  error: z.object({
    message: z.string().describe('What went wrong, for a person. Never echoes message contents.'),
    type: apiErrorTypeSchema,
    param: z.string().nullable().describe('The request field at fault, when one is.'),
    code: z.string().nullable().describe('A stable machine-readable code, e.g. invalid_api_key, model_not_found, timeout.'),
  }),
});

export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;
