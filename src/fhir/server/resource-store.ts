// The in-memory resource store: one table per resource type, each with exact-match indexes.
// fork() is O(number of types): tables are shared until written, then copied (a table owned by no store is
// frozen), and inside a copied table each index set is shared until it is written.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Resource } from '@medplum/fhirtypes';
import { ensureFhirTypesOf } from '../../vocabulary/fhir/fhir-definitions.ts';
import { indexKeys } from './search-index-keys.ts';

type Stored = Resource & { id: string };

class Table {
  readonly byId: Map<string, Stored>;
  /**
   * The exact-match indexes; null while deferred. A table the boot seed fills (putDeferred) is indexed when first
   * looked up or by buildIndexes() once the server answers, not as resources are filed: computing a resource's
   * keys runs FHIRPath, about half of what seeding the synthetic EHR cost. Every other table is indexed as written.
   */
  private index: Map<string, Map<string, Set<string>>> | null;
  private readonly ownedSets = new Set<Set<string>>();
  /** Bumped by every write: a build in slices that sees it change starts over. */
  version = 0;

  constructor(byId = new Map<string, Stored>(), index: Map<string, Map<string, Set<string>>> | null = new Map()) {
    this.byId = byId;
    this.index = index;
  }

  get indexed(): boolean {
    return this.index !== null;
  }

  clone(): Table {
    if (!this.index) return new Table(new Map(this.byId), null);
    const index = new Map<string, Map<string, Set<string>>>();
    for (const [param, keys] of this.index) index.set(param, new Map(keys));
    return new Table(new Map(this.byId), index);
  }

  lookup(param: string, key: string): ReadonlySet<string> | undefined {
    if (!this.index) this.adopt(indexOf(this.byId.values()));
    return this.index!.get(param)?.get(key);
  }

  /** Takes an index built from this table's resources (the sets in it become this table's own). */
  adopt(index: Map<string, Map<string, Set<string>>>): void {
    for (const keys of index.values()) for (const set of keys.values()) this.ownedSets.add(set);
    this.index = index;
  }

  private writableSet(param: string, key: string): Set<string> {
    const index = this.index!;
    let keys = index.get(param);
    if (!keys) index.set(param, (keys = new Map()));
    let set = keys.get(key);
    if (!set) {
      set = new Set();
      keys.set(key, set);
      this.ownedSets.add(set);
    } else if (!this.ownedSets.has(set)) {
      set = new Set(set);
      keys.set(key, set);
      this.ownedSets.add(set);
    }
    return set;
  }

  put(resource: Stored): void {
    this.version++;
    const previous = this.byId.get(resource.id);
    if (previous) this.unindex(previous);
    this.byId.set(resource.id, resource);
    if (this.index) for (const [param, key] of indexKeys(resource)) this.writableSet(param, key).add(resource.id);
  }

  remove(id: string): Stored | undefined {
    const previous = this.byId.get(id);
    if (!previous) return undefined;
    this.version++;
    this.unindex(previous);
    this.byId.delete(id);
    return previous;
  }

  private unindex(resource: Stored): void {
    if (!this.index) return;
    for (const [param, key] of indexKeys(resource)) {
      const set = this.writableSet(param, key);
      set.delete(resource.id);
      if (set.size === 0) this.index.get(param)!.delete(key);
    }
  }
}

function fileUnder(index: Map<string, Map<string, Set<string>>>, resource: Stored): void {
  for (const [param, key] of indexKeys(resource)) {
    let keys = index.get(param);
    if (!keys) index.set(param, (keys = new Map()));
    let set = keys.get(key);
    if (!set) keys.set(key, (set = new Set()));
    set.add(resource.id);
  }
}

function indexOf(resources: Iterable<Stored>): Map<string, Map<string, Set<string>>> {
  const index = new Map<string, Map<string, Set<string>>>();
  for (const resource of resources) fileUnder(index, resource);
  return index;
}

/** Resources indexed between two turns of the event loop when building in the background (about 10 ms). */
const SLICE = 250;

export class ResourceStore {
  private readonly tables: Map<string, Table>;
  private readonly owned = new Set<Table>();

  constructor(tables = new Map<string, Table>()) {
    this.tables = tables;
  }

  private writable(resourceType: string, deferIndex = false): Table {
    let table = this.tables.get(resourceType);
    if (!table) {
      table = new Table(new Map(), deferIndex ? null : new Map());
      this.tables.set(resourceType, table);
      this.owned.add(table);
    } else if (!this.owned.has(table)) {
      table = table.clone();
      this.tables.set(resourceType, table);
      this.owned.add(table);
    }
    return table;
  }

  get(resourceType: string, id: string): Stored | undefined {
    return this.tables.get(resourceType)?.byId.get(id);
  }

  /** Stores the resource as given; callers hand over an object they will not mutate again. */
  put(resource: Stored): void {
    // FHIRPath reads a stored resource through its type's schema (search values, filters, includes), and the
    // resources inside it through theirs: indexed in Medplum's registry before the resource is filed.
    ensureFhirTypesOf(resource);
    this.writable(resource.resourceType).put(resource);
  }

  /** As put(), but a table this creates defers its indexes (see Table): for a seed loaded before the server answers. */
  putDeferred(resource: Stored): void {
    ensureFhirTypesOf(resource);
    this.writable(resource.resourceType, true).put(resource);
  }

  remove(resourceType: string, id: string): Stored | undefined {
    if (!this.tables.get(resourceType)?.byId.has(id)) return undefined;
    return this.writable(resourceType).remove(id);
  }

  /** Every resource of a type, in insertion order. */
  all(resourceType: string): Iterable<Stored> {
    return this.tables.get(resourceType)?.byId.values() ?? [];
  }

  /** Resource types with a table (possibly empty). */
  types(): string[] {
    return [...this.tables.keys()];
  }

  size(resourceType: string): number {
    return this.tables.get(resourceType)?.byId.size ?? 0;
  }

  /** Ids filed under an index key, or undefined when nothing is. Do not mutate the result. */
  lookup(resourceType: string, param: string, key: string): ReadonlySet<string> | undefined {
    return this.tables.get(resourceType)?.lookup(param, key);
  }

  /**
   * Builds the indexes not built yet, a slice at a time between turns of the event loop, so a server answers
   * while it finishes (a lookup before then builds its table's index at once). A table written meanwhile is
   * indexed again from the start.
   */
  async buildIndexes(): Promise<void> {
    for (const table of new Set(this.tables.values())) {
      while (!table.indexed) {
        const version = table.version;
        const index = new Map<string, Map<string, Set<string>>>();
        let n = 0;
        let changed = false;
        for (const resource of table.byId.values()) {
          fileUnder(index, resource);
          if (++n % SLICE === 0) {
            await yieldToLoop();
            if (table.version !== version || table.indexed) {
              changed = true;
              break;
            }
          }
        }
        if (!changed) table.adopt(index);
      }
    }
  }

  count(): number {
    let n = 0;
    for (const table of this.tables.values()) n += table.byId.size;
    return n;
  }

  fork(): ResourceStore {
    // After a fork neither side may write a shared table in place.
    this.owned.clear();
    return new ResourceStore(new Map(this.tables));
  }
}
