// The five keys issue 19's attacker used, written as an API_KEYS_FILE: a patient reader and writer confined to
// S1000001, a system reader, a key without the chat flag, and an admin.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiKey } from '../../src/policies/auth/create-api-key.ts';
import { writeApiKeysFile } from './api-keys-file.ts';

export const OWN_PATIENT = 'S1000001';

export function writeAttackKeys(): { file: string; key: Record<'pat1' | 'patw' | 'sys1' | 'nochat' | 'admin', string> } {
  const file = join(mkdtempSync(join(tmpdir(), 'attack-keys-')), 'keys.yaml');
  const key = writeApiKeysFile(file, {
    pat1: createApiKey({ id: 'pat1', scopes: 'patient/*.rs chat', patients: [OWN_PATIENT] }),
    patw: createApiKey({ id: 'patw', scopes: 'patient/*.cruds chat tools:write', patients: [OWN_PATIENT] }),
    sys1: createApiKey({ id: 'sys1', scopes: 'system/*.rs chat' }),
    nochat: createApiKey({ id: 'nochat', scopes: 'system/*.rs' }),
    admin: createApiKey({ id: 'admin', scopes: 'system/*.cruds chat tools:write' }),
  });
  return { file, key };
}
