// FHIR_PRIVATE_KEY_FILE: the client's signing key for SMART Backend Services, PEM (PKCS#8) or JWK, RSA (RS384) or
// EC P-384 (ES384), the two algorithms SMART requires servers to support. The `kid` is the JWK's own, else its
// RFC 7638 thumbprint, which is what a server computes from the registered JWKS. Errors never quote the file.
import { readFile } from 'node:fs/promises';
import type { CryptoKey, JWK } from 'jose';
import { z } from 'zod';

export type SigningAlg = 'RS384' | 'ES384';
export interface SigningKey {
  key: CryptoKey | Uint8Array;
  alg: SigningAlg;
  kid: string;
}

const jwkSchema = z.looseObject({
  kty: z.enum(['RSA', 'EC']),
  crv: z.string().optional(),
  d: z.string().min(1, 'a private key (no "d": this is a public key)'),
  kid: z.string().min(1).optional(),
  alg: z.string().optional(),
});

function algFor(jwk: { kty: string; crv?: string }): SigningAlg {
  if (jwk.kty === 'RSA') return 'RS384';
  if (jwk.kty === 'EC' && jwk.crv === 'P-384') return 'ES384';
  throw new Error(`an RSA or EC P-384 key (this one is ${jwk.kty}${jwk.crv ? ` ${jwk.crv}` : ''})`);
}

/** The signing key in `path`; throws an Error whose message says what is wrong, never the key. */
export async function readPrivateKey(path: string): Promise<SigningKey> {
  // Imported only with FHIR_AUTH=smart-backend, not at every gateway's boot.
  const { calculateJwkThumbprint, exportJWK, importJWK, importPKCS8 } = await import('jose');
  let text: string;
  try {
    text = (await readFile(path, 'utf8')).trim();
  } catch (err) {
    throw new Error(`cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { cause: err });
  }
  if (text.startsWith('{')) {
    let parsed: z.infer<typeof jwkSchema>;
    try {
      parsed = jwkSchema.parse(JSON.parse(text));
    } catch (err) {
      throw new Error(err instanceof z.ZodError ? `not a private JWK: ${err.issues[0]?.message}` : 'not valid JSON', { cause: err });
    }
    const alg = algFor(parsed);
    const key = await importJWK(parsed as JWK, alg).catch(() => {
      throw new Error('a JWK that does not import as a private key');
    });
    return { key, alg, kid: parsed.kid ?? (await calculateJwkThumbprint(parsed as JWK)) };
  }
  if (!/-----BEGIN PRIVATE KEY-----/.test(text)) throw new Error('neither a PKCS#8 PEM ("BEGIN PRIVATE KEY") nor a JWK');
  for (const alg of ['RS384', 'ES384'] as const) {
    const key = await importPKCS8(text, alg, { extractable: true }).catch(() => undefined);
    if (!key) continue;
    // The thumbprint takes only the public members.
    return { key, alg, kid: await calculateJwkThumbprint(await exportJWK(key)) };
  }
  throw new Error('a PEM that is neither an RSA nor an EC P-384 private key');
}
