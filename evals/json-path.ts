// A deliberately small path language for graders: `a.b[0].c`, `a[*].b`, `x|y`, optional leading `$` / `$.`.
// Returns every value reached (wildcards fan out); arrays met without an index are fanned out too,
// so `code.coding.code` matches any coding, which is what FHIR graders almost always mean.

export function selectPath(root: unknown, path: string): unknown[] {
  // `a|b`: alternatives, for fields FHIR lets writers put in more than one place (code.text or code.coding.code).
  if (path.includes('|')) return path.split('|').flatMap((p) => selectPath(root, p.trim()));
  const tokens = tokenize(path);
  if (!tokens) return [];
  let current: unknown[] = [root];
  for (const token of tokens) {
    const next: unknown[] = [];
    for (const value of current) {
      if (token === '*') {
        if (Array.isArray(value)) next.push(...value);
        else if (value && typeof value === 'object') next.push(...Object.values(value));
      } else if (typeof token === 'number') {
        if (Array.isArray(value) && token < value.length) next.push(value[token]);
      } else if (Array.isArray(value)) {
        for (const item of value) if (isRecord(item) && token in item) next.push(item[token]);
      } else if (isRecord(value) && token in value) {
        next.push(value[token]);
      }
    }
    current = next;
  }
  return current;
}

function tokenize(path: string): Array<string | number> | null {
  const body = path.replace(/^\$\.?/, '');
  const tokens: Array<string | number> = [];
  const re = /([^.[\]]+)|\[(\d+|\*)\]|\./gy;
  let m: RegExpExecArray | null;
  let consumed = 0;
  while ((m = re.exec(body))) {
    consumed = re.lastIndex;
    if (m[1] !== undefined) tokens.push(m[1] === '*' ? '*' : m[1]);
    else if (m[2] !== undefined) tokens.push(m[2] === '*' ? '*' : Number(m[2]));
  }
  return consumed === body.length ? tokens : null;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
