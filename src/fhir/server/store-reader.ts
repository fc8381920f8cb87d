// The read side of the ResourceStore, which searches, includes and $everything use; scopedStoreView gives the same
// view with one caller's access applied, so those modules cannot reach what the caller may not see.
import type { ResourceStore } from './resource-store.ts';

export type StoreReader = Pick<ResourceStore, 'get' | 'all' | 'lookup' | 'types'>;
