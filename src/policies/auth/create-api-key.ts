// A new API key and its API_KEYS_FILE entry. The key is shown once and never stored: the entry holds its SHA-256.
import { randomBytes as nodeRandomBytes } from 'node:crypto';
import { parseApiKeysFile, sha256Of } from './api-keys-file.ts';

export interface CreateApiKeyOptions {
  id: string;
  /** Scopes and flags, space-separated, e.g. "system/*.rs chat". */
  scopes: string;
  /** For patient/ scopes: the Patient ids the key may see. */
  patients?: string[];
  randomBytes?: (n: number) => Buffer;
}

export interface CreatedApiKey {
  key: string;
  /** The YAML list item to paste under `keys:`. */
  entry: string;
}

/** Throws an Error naming what is wrong with the id, scopes or patients (the same checks as at boot). */
export function createApiKey({ id, scopes, patients, randomBytes = nodeRandomBytes }: CreateApiKeyOptions): CreatedApiKey {
  const key = `fag_${randomBytes(32).toString('base64url')}`;
  const lines = [`  - id: ${JSON.stringify(id)}`, `    sha256: ${sha256Of(key).toString('hex')}`, `    scopes: ${JSON.stringify(scopes)}`];
  if (patients?.length) lines.push(`    patients: [${patients.map((p) => JSON.stringify(p)).join(', ')}]`);
  const entry = lines.join('\n');
  parseApiKeysFile(`keys:\n${entry}\n`);
  return { key, entry };
}
