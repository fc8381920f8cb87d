// The shape of FHIR resources as a set of field paths, values left out: `.code.coding[].system=mimic-medication-name`
// (a `system` keeps its last segment, so a shape says which code system a field uses). Comparing two sets compares
// how two data sets are written without reading, printing or keeping any of their values.
export function shapePaths(resources: readonly unknown[]): Set<string> {
  const out = new Set<string>();
  const walk = (v: unknown, path: string): void => {
    if (Array.isArray(v)) {
      for (const x of v) walk(x, `${path}[]`);
      return;
    }
    if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) if (k !== 'div') walk(x, `${path}.${k}`);
      const system = (v as { system?: unknown }).system;
      if (typeof system === 'string') out.add(`${path}.system=${system.split('/').pop()}`);
      return;
    }
    out.add(path);
  };
  for (const r of resources) walk(r, '');
  return out;
}
