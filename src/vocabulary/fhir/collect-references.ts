// Every `reference` string in a FHIR resource, at any depth, as written (the loader's order planning, $everything).
export function collectReferences(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) {
    for (const item of node) collectReferences(item, out);
  } else if (node && typeof node === 'object') {
    // for-in over parsed JSON (own, enumerable keys only): no array of pairs per object, on every resource.
    const record = node as Record<string, unknown>;
    for (const k in record) {
      const v = record[k];
      if (k === 'reference' && typeof v === 'string') out.push(v);
      else if (v && typeof v === 'object') collectReferences(v, out);
    }
  }
  return out;
}
