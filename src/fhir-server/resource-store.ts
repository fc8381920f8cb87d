// The in-memory resource store: one table per resource type, each with exact-match indexes.
// fork() is O(number of types): tables are shared until written, then copied (a table owned by no store is
// frozen), and inside a copied table each index set is shared until it is written.
import type { Resource } from '@medplum/fhirtypes';
import { indexKeys } from './search-index-keys.ts';

type Stored = Resource & { id: string };

class Table {
  readonly byId: Map<string, Stored>;
  readonly index: Map<string, Map<string, Set<string>>>;
  private readonly ownedSets = new Set<Set<string>>();

  constructor(byId = new Map<string, Stored>(), index = new Map<string, Map<string, Set<string>>>()) {
    this.byId = byId;
    this.index = index;
  }

  clone(): Table {
    const index = new Map<string, Map<string, Set<string>>>();
    for (const [param, keys] of this.index) index.set(param, new Map(keys));
    return new Table(new Map(this.byId), index);
  }

  private writableSet(param: string, key: string): Set<string> {
    let keys = this.index.get(param);
    if (!keys) this.index.set(param, (keys = new Map()));
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
    const previous = this.byId.get(resource.id);
    if (previous) this.unindex(previous);
    this.byId.set(resource.id, resource);
    for (const [param, key] of indexKeys(resource)) this.writableSet(param, key).add(resource.id);
  }

  remove(id: string): Stored | undefined {
    const previous = this.byId.get(id);
    if (!previous) return undefined;
    this.unindex(previous);
    this.byId.delete(id);
    return previous;
  }

  private unindex(resource: Stored): void {
    for (const [param, key] of indexKeys(resource)) {
      const set = this.writableSet(param, key);
      set.delete(resource.id);
      if (set.size === 0) this.index.get(param)!.delete(key);
    }
  }
}

export class ResourceStore {
  private readonly tables: Map<string, Table>;
  private readonly owned = new Set<Table>();

  constructor(tables = new Map<string, Table>()) {
    this.tables = tables;
  }

  private writable(resourceType: string): Table {
    let table = this.tables.get(resourceType);
    if (!table) {
      table = new Table();
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
    this.writable(resource.resourceType).put(resource);
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
    return this.tables.get(resourceType)?.index.get(param)?.get(key);
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
