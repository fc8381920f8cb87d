// An API key's access as the embedded server's repository applies it (RepositoryAccess): what the key may see is
// what its scopes allow on the type, and for patient/ scopes only its patients' resources plus shared data (types
// no patient owns, such as Medication). The same decision as the tools' (decideAccess), made once per type.
import type { Resource } from '@medplum/fhirtypes';
import type { RepositoryAccess, RepositoryWrite } from '../../fhir/server/repository-access.ts';
import { decideAccess, type AccessDecision, type KeyAccess } from './key-access.ts';
import { isSharedType, withinPatients } from './patient-compartment.ts';

export function keyRepositoryAccess(access: KeyAccess, shown?: (resource: Resource) => void): RepositoryAccess {
  // Whether the key may see a type at all (read or search), and within which patients; decided once per type.
  const seeing = new Map<string, { allowed: boolean; patients?: ReadonlySet<string> }>();
  const sight = (type: string) => {
    let s = seeing.get(type);
    if (!s) {
      const read = decideAccess(access, 'read', type);
      const d: AccessDecision = read.allowed ? read : decideAccess(access, 'search', type);
      s = d.allowed ? { allowed: true, patients: d.patients && !isSharedType(type) ? d.patients : undefined } : { allowed: false };
      seeing.set(type, s);
    }
    return s;
  };
  return {
    shows(resource) {
      const s = sight(resource.resourceType);
      return s.allowed && (!s.patients || withinPatients(resource, s.patients));
    },
    compartment: (type) => sight(type).patients,
    refusesWrite(interaction: RepositoryWrite, resource: Resource) {
      const d = decideAccess(access, interaction, resource.resourceType);
      if (!d.allowed) return d.reason;
      if (d.patients && !withinPatients(resource, d.patients)) {
        return `API key "${access.id}" may write only resources whose subject or patient is one of its listed patients`;
      }
      return undefined;
    },
    shown,
  };
}
