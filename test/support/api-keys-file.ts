// Keys made with createApiKey, written as the gateway's API_KEYS_FILE, for tests that start it with several keys.
import { writeFileSync } from 'node:fs';
import type { CreatedApiKey } from '../../src/policies/auth/create-api-key.ts';

/** Writes the keys' entries to `file` (a comment first: the file is YAML) and returns each key's secret by name. */
export function writeApiKeysFile<K extends string>(file: string, made: Record<K, CreatedApiKey>): Record<K, string> {
  const keys = Object.entries<CreatedApiKey>(made);
  writeFileSync(file, `# test keys\nkeys:\n${keys.map(([, m]) => m.entry).join('\n')}\n`);
  return Object.fromEntries(keys.map(([name, m]) => [name, m.key])) as Record<K, string>;
}
