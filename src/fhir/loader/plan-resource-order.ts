// The load order of bulk NDJSON, planned across every file from the references themselves (file names say
// nothing: MIMIC's `MimicCondition.ndjson.gz` names no type). Each resource loads after what it references, so
// servers with referential integrity (HAPI) accept it; resources that reference each other in a cycle (MIMIC's
// microbiology: test → organism → susceptibility → organism) form one group, always sent whole inside one transaction.
import { collectReferences } from '../../vocabulary/fhir/collect-references.ts';
import type { RawEntry } from './input-schemas.ts';
import { chooseId } from './prepare-entries.ts';
import { stableId } from './stable-id.ts';

export interface PlannedEntry {
  /** Index of the file in the list given to planResourceOrder. */
  file: number;
  raw: RawEntry;
}

export interface OrderLevel {
  /** Entries whose targets are all in earlier levels; any order among them works. */
  singles: PlannedEntry[];
  /** Cycles: each group must be written together. */
  groups: PlannedEntry[][];
}

const RELATIVE = /^([A-Z][A-Za-z]+)\/([^/?#]+)(\/_history\/[^/?#]+)?$/;
const CONDITIONAL_IDENTIFIER = /^([A-Z][A-Za-z]+)\?identifier=([^&]+)$/;

function identifierKeys(resourceType: string, identifier: unknown): string[] {
  if (!Array.isArray(identifier)) return [];
  return identifier.flatMap((i: { system?: unknown; value?: unknown }) =>
    typeof i?.value === 'string' ? [`${resourceType}?identifier=${typeof i.system === 'string' ? `${i.system}|` : ''}${i.value}`] : [],
  );
}

/** Tarjan's strongly connected components, iteratively; components come out dependencies first. */
function components(n: number, edges: number[][]): number[][] {
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const out: number[][] = [];
  let counter = 0;
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    const work: Array<[number, number]> = [[root, 0]];
    while (work.length) {
      const frame = work[work.length - 1];
      const [v, i] = frame;
      if (i === 0) {
        index[v] = low[v] = counter++;
        stack.push(v);
        onStack[v] = 1;
      }
      if (i < edges[v].length) {
        frame[1]++;
        const w = edges[v][i];
        if (index[w] === -1) work.push([w, 0]);
        else if (onStack[w]) low[v] = Math.min(low[v], index[w]);
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1][0];
        low[parent] = Math.min(low[parent], low[v]);
      }
      if (low[v] === index[v]) {
        const component: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack[w] = 0;
          component.push(w);
        } while (w !== v);
        out.push(component);
      }
    }
  }
  return out;
}

/**
 * Orders every readable entry into levels. References to resources outside the input (already on the server, or
 * nowhere) do not constrain the order; the server decides about those. Unreadable entries are left out (the caller
 * reports them).
 */
export function planResourceOrder(files: RawEntry[][]): OrderLevel[] {
  const nodes: PlannedEntry[] = [];
  const refs: string[][] = [];
  const byKey = new Map<string, number>();
  const conditionalTypes = new Set<string>();
  files.forEach((entries, file) => {
    for (const raw of entries) {
      if (!raw.resource) continue;
      const key = `${raw.resource.resourceType}/${chooseId(raw.resource, raw.fullUrl)}`;
      const at = nodes.length;
      nodes.push({ file, raw });
      const found: string[] = [];
      collectReferences(raw.resource, found);
      const targets: string[] = [];
      for (const ref of found) {
        const relative = RELATIVE.exec(ref);
        if (relative) targets.push(`${relative[1]}/${stableId(relative[2])}`);
        else if (CONDITIONAL_IDENTIFIER.test(ref)) {
          targets.push(decodeURIComponent(ref));
          conditionalTypes.add(ref.slice(0, ref.indexOf('?')));
        }
      }
      // A second copy of a resource loads after the first, so the last one in the input wins, as it would in order.
      const first = byKey.get(key);
      if (first === undefined) byKey.set(key, at);
      else targets.push(key);
      refs.push(targets);
    }
  });
  for (const [at, node] of nodes.entries()) {
    const resource = node.raw.resource!;
    if (!conditionalTypes.has(resource.resourceType)) continue;
    for (const key of identifierKeys(resource.resourceType, resource.identifier)) if (!byKey.has(key)) byKey.set(key, at);
  }
  const edges = refs.map((targets, from) => {
    const out = new Set<number>();
    for (const t of targets) {
      const to = byKey.get(t);
      if (to !== undefined && to !== from) out.add(to);
    }
    return [...out];
  });

  const levelOfNode = new Int32Array(nodes.length);
  const levels: OrderLevel[] = [];
  for (const component of components(nodes.length, edges)) {
    const members = new Set(component);
    let level = 0;
    for (const v of component) for (const w of edges[v]) if (!members.has(w)) level = Math.max(level, levelOfNode[w] + 1);
    for (const v of component) levelOfNode[v] = level;
    while (levels.length <= level) levels.push({ singles: [], groups: [] });
    if (component.length === 1) levels[level].singles.push(nodes[component[0]]);
    else levels[level].groups.push(component.sort((a, b) => a - b).map((v) => nodes[v]));
  }
  // Input order within a level: files stay together, which keeps each request within one file where possible.
  for (const level of levels) level.singles.sort((a, b) => a.file - b.file || a.raw.index - b.raw.index);
  return levels;
}
