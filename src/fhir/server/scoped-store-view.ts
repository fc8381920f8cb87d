// The store as one caller may see it: get, all and the indexes hold only what `access.shows` allows. A search of a
// type confined to a few patients walks those patients' index entries instead of the whole table, so a
// patient-scoped search costs about what the same search with `patient=` costs a system key.
import type { Resource } from '@medplum/fhirtypes';
import type { RepositoryAccess } from './repository-access.ts';
import type { ResourceStore } from './resource-store.ts';
import { indexedParams } from './search-index-keys.ts';
import type { StoreReader } from './store-reader.ts';

type Stored = Resource & { id: string };

function* compartmentMembers(store: ResourceStore, resourceType: string, patients: ReadonlySet<string>): Iterable<Stored> {
  if (resourceType === 'Patient') {
    for (const id of patients) {
      const r = store.get('Patient', id);
      if (r) yield r;
    }
    return;
  }
  const seen = new Set<string>();
  for (const code of indexedParams(resourceType).filter((c) => c === 'patient' || c === 'subject')) {
    for (const patient of patients) {
      for (const id of store.lookup(resourceType, code, `Patient/${patient}`) ?? []) {
        if (seen.has(id)) continue;
        seen.add(id);
        const r = store.get(resourceType, id);
        if (r) yield r;
      }
    }
  }
}

/** Whether a type's members are found through its patient/subject index (else a confined search scans and filters). */
const indexedByPatient = (resourceType: string) =>
  resourceType === 'Patient' || indexedParams(resourceType).some((c) => c === 'patient' || c === 'subject');

export function scopedStoreView(store: ResourceStore, access: RepositoryAccess): StoreReader {
  const get = (resourceType: string, id: string): Stored | undefined => {
    const r = store.get(resourceType, id);
    return r && access.shows(r) ? r : undefined;
  };
  return {
    get,
    types: () => store.types(),
    *all(resourceType) {
      const patients = access.compartment(resourceType);
      const source =
        patients && indexedByPatient(resourceType) ? compartmentMembers(store, resourceType, patients) : store.all(resourceType);
      for (const r of source) if (access.shows(r)) yield r;
    },
    // Ids only: whoever reads the resources behind them goes through `get`, which hides what the caller may not see.
    lookup: (resourceType, param, key) => store.lookup(resourceType, param, key),
  };
}
