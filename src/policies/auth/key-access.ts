// What one API key may do: its SMART scopes, its flags and its patient list, and the one decision made from
// them for every FHIR interaction, whether it comes through /fhir or through a tool.
import { scopeGrantSchema, scopeLetters, type FhirInteraction, type KeyFlag, type SmartScope } from './smart-scope.ts';

export interface KeyAccess {
  /** Names the key in logs and the audit; never the key itself. */
  id: string;
  scopes: readonly SmartScope[];
  flags: ReadonlySet<KeyFlag>;
  /** Bare Patient ids that the key's patient/ scopes reach. */
  patients: ReadonlySet<string>;
  /** False only for the anonymous loopback sandbox: nothing it does is audited. */
  audited: boolean;
}

/** Allowed everywhere, or only within `patients`; or refused, with a reason that names no data. */
export type AccessDecision = { allowed: true; patients?: ReadonlySet<string> } | { allowed: false; reason: string };

function grant(text: string): Pick<KeyAccess, 'scopes' | 'flags'> {
  return scopeGrantSchema.parse(text);
}

/**
 * A key from the plain API_KEYS list (and the anonymous loopback sandbox): read and search everything, and chat.
 * Writing, through /fhir or the tools, needs FHIR_WRITE_TOOLS=true; for anything finer, use API_KEYS_FILE.
 */
export function plainKeyAccess(id: string, opts: { writes: boolean; audited?: boolean }): KeyAccess {
  const { scopes, flags } = grant(opts.writes ? 'system/*.cruds chat tools:write' : 'system/*.rs chat');
  return { id, scopes, flags, patients: new Set(), audited: opts.audited ?? true };
}

/** AuditEvents are append-only, and only a scope that names AuditEvent may create one by hand. */
function covers(scope: SmartScope, interaction: FhirInteraction, resourceType: string): boolean {
  if (!scope.interactions.has(interaction)) return false;
  if (scope.resourceType === resourceType) return true;
  return scope.resourceType === '*' && !(resourceType === 'AuditEvent' && interaction !== 'read' && interaction !== 'search');
}

export function decideAccess(access: KeyAccess, interaction: FhirInteraction, resourceType: string): AccessDecision {
  if (resourceType === 'AuditEvent' && (interaction === 'update' || interaction === 'delete')) {
    return { allowed: false, reason: 'AuditEvent records are append-only' };
  }
  const matching = access.scopes.filter((s) => covers(s, interaction, resourceType));
  if (matching.some((s) => s.context === 'system')) return { allowed: true };
  if (matching.length > 0) return { allowed: true, patients: access.patients };
  return {
    allowed: false,
    reason: `API key "${access.id}" has no scope for ${interaction} on ${resourceType} (e.g. system/${resourceType}.${scopeLetters([interaction])})`,
  };
}

/** The same key as the tools see it: without `tools:write`, no create, update or delete. */
export function toolAccess(access: KeyAccess): KeyAccess {
  if (access.flags.has('tools:write')) return access;
  const readOnly = (s: SmartScope): SmartScope => ({
    ...s,
    interactions: new Set([...s.interactions].filter((i) => i === 'read' || i === 'search')),
  });
  return { ...access, scopes: access.scopes.map(readOnly).filter((s) => s.interactions.size > 0) };
}

/** Whether the agent's write tools are worth offering to the model for this key. */
export function toolsMayWrite(access: KeyAccess): boolean {
  return access.flags.has('tools:write') && access.scopes.some((s) => s.interactions.has('create'));
}
