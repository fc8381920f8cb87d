// Every `reference` string in a FHIR resource, at any depth: the tests' own walker, apart from the loader's.
export function references(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => references(n, out));
  else if (node && typeof node === 'object')
    for (const [k, v] of Object.entries(node)) {
      if (k === 'reference' && typeof v === 'string') out.push(v);
      else references(v, out);
    }
  return out;
}
