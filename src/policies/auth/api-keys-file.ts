// API_KEYS_FILE: the keys with what each may do, YAML or JSON (JSON is YAML). Keys are stored as the SHA-256 of
// the key: keys made by `npm run key` are 32 random bytes, so a fast hash is enough (a slow one such as scrypt
// protects guessable passwords, and would cost every request).
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { z } from 'zod';
import type { KeyAccess } from './key-access.ts';
import { scopeGrantSchema } from './smart-scope.ts';

/** A configured key: the digest to compare against, and what the key may do. */
export interface ApiKeyEntry {
  sha256: Buffer;
  access: KeyAccess;
}

const KEY_ID = /^[A-Za-z0-9][\w.@-]{0,63}$/;
const FHIR_ID = /^[A-Za-z0-9\-.]{1,64}$/;

const entrySchema = z
  .strictObject({
    id: z.string().regex(KEY_ID, 'must be 1-64 letters, digits, "_", ".", "@" or "-"'),
    sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be the 64 hex digits of the SHA-256 of the key'),
    scopes: scopeGrantSchema,
    patients: z.array(z.string().regex(FHIR_ID, 'must be a Patient id')).min(1).optional(),
  })
  .superRefine((e, ctx) => {
    const patientScoped = e.scopes.scopes.some((s) => s.context === 'patient');
    if (patientScoped && !e.patients) ctx.addIssue({ code: 'custom', path: ['patients'], message: 'patient/ scopes need a patients list' });
    if (!patientScoped && e.patients)
      ctx.addIssue({ code: 'custom', path: ['patients'], message: 'a patients list needs a patient/ scope' });
  });

const fileSchema = z.strictObject({ keys: z.array(entrySchema) }).superRefine(({ keys }, ctx) => {
  const seen = { id: new Set<string>(), sha256: new Set<string>() };
  keys.forEach((k, i) => {
    if (seen.id.has(k.id)) ctx.addIssue({ code: 'custom', path: ['keys', i, 'id'], message: `duplicate id ${k.id}` });
    if (seen.sha256.has(k.sha256.toLowerCase()))
      ctx.addIssue({ code: 'custom', path: ['keys', i, 'sha256'], message: 'the same key twice' });
    seen.id.add(k.id);
    seen.sha256.add(k.sha256.toLowerCase());
  });
});

export const sha256Of = (key: string): Buffer => createHash('sha256').update(key).digest();

/** Parses the file's text; throws an Error whose message names the first problem and where it is. */
export function parseApiKeysFile(text: string): ApiKeyEntry[] {
  let raw: unknown;
  try {
    // yaml (72 CommonJS files, ~30 ms) is required only when there is a keys file to read.
    raw = (createRequire(import.meta.url)('yaml') as typeof Yaml).parse(text);
  } catch (err) {
    throw new Error(`not YAML or JSON: ${(err as Error).message.split('\n')[0]}`, { cause: err });
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data.keys.map((k) => ({
    sha256: Buffer.from(k.sha256, 'hex'),
    access: { id: k.id, scopes: k.scopes.scopes, flags: k.scopes.flags, patients: new Set(k.patients ?? []), audited: true },
  }));
}
