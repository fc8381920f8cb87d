// What one caller may see and change, as the embedded server's repository applies it. Implemented by the auth
// layer for an API key and handed in with the request, so every interaction Medplum's router runs (reads, searches
// and their includes, history, batch and transaction entries, GraphQL, the searches behind conditional writes)
// reaches the data through it, whatever path, form or body the request came in. Types only.
import type { Resource } from '@medplum/fhirtypes';

export type RepositoryWrite = 'create' | 'update' | 'delete';

export interface RepositoryAccess {
  /** Whether the caller may see this stored resource at all; what it may not see does not exist for it. */
  shows(resource: Resource): boolean;
  /** The patients a type's resources are confined to for this caller (to narrow searches by index); undefined: all. */
  compartment(resourceType: string): ReadonlySet<string> | undefined;
  /** Why the caller may not write this (the new content, or for a delete the current one); undefined when it may. */
  refusesWrite(interaction: RepositoryWrite, resource: Resource): string | undefined;
  /** Told of every resource the repository hands out, as stored (the audit's patients). */
  shown?(resource: Resource): void;
}
