// What the loader accepts from disk, checked per entry so one bad entry never rejects its whole file.
import { z } from 'zod';

export const ResourceSchema = z.looseObject({
  resourceType: z.string().regex(/^[A-Z][A-Za-z]{1,63}$/, 'resourceType must be a FHIR resource type name'),
  id: z.string().optional(),
});
export type LoadableResource = z.infer<typeof ResourceSchema>;

const BundleRequestSchema = z.looseObject({
  method: z.enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']),
  url: z.string().min(1),
});

export const BundleEntrySchema = z.looseObject({
  fullUrl: z.string().optional(),
  resource: ResourceSchema.optional(),
  request: BundleRequestSchema.optional(),
});

export const BundleFileSchema = z.looseObject({
  resourceType: z.literal('Bundle'),
  type: z.string(),
  entry: z.array(z.unknown()).optional(),
});

/** One unit read from a file: a bundle entry or an NDJSON line, or why it could not be read. */
export interface RawEntry {
  index: number;
  fullUrl?: string;
  resource?: LoadableResource;
  request?: z.infer<typeof BundleRequestSchema>;
  error?: string;
}

export type ChunkMode = 'transaction' | 'batch';

/** Entries sent together in one request. */
export interface FileChunk {
  mode: ChunkMode;
  entries: RawEntry[];
  /** Bytes of the file (as stored, so compressed for .gz) consumed so far, for progress estimates. */
  bytesRead: number;
}

export function describeZodError(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
}
