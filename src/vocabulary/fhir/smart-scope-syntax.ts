// SMART on FHIR scopes (hl7.org/fhir/smart-app-launch/scopes-and-launch-context.html), read once for everyone who
// reads them: the API keys' grants (src/policies/auth/smart-scope.ts, which adds the gateway's own rules) and the tools a
// FHIR server's grant covers (src/tools/kit/tools-for-scopes.ts). Syntax only: which contexts, types and letters are
// acceptable is each reader's policy.

export interface SmartScopeSyntax {
  /** `system`, `patient`, `user`, or whatever else the token says. */
  context: string;
  /** A resource type, or `*` for every type. */
  resourceType: string;
  /** v2 letters as written (`rs`, `cruds`); a v1 suffix (.read .write .*) as its v2 letters. */
  letters: string;
  /** A v2 search restriction (`?category=…`), when there is one. */
  query?: string;
}

const V1_SUFFIXES: Record<string, string> = { read: 'rs', write: 'cud', '*': 'cruds' };
const SCOPE = /^([a-z]+)\/(\*|[A-Za-z]+)\.([a-z*]+)(\?.*)?$/;

/** Undefined when the token is not shaped as a scope at all (e.g. `openid`, `launch/patient`). */
export function parseSmartScopeSyntax(token: string): SmartScopeSyntax | undefined {
  const m = SCOPE.exec(token);
  if (!m) return undefined;
  const [, context, resourceType, suffix, query] = m;
  return { context, resourceType, letters: V1_SUFFIXES[suffix] ?? suffix, ...(query ? { query } : {}) };
}
