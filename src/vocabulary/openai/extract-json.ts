// JSON mode: models sometimes wrap the JSON in prose or code fences even when asked not to. Recover it when the
// text holds exactly one parseable JSON value; otherwise report failure so the caller never returns bad JSON.

function tryParse(text: string): string | null {
  try {
    JSON.parse(text);
    return text;
  } catch {
    return null;
  }
}

/** The end index (exclusive) of the balanced JSON value starting at `start`, honouring strings. */
export function balancedEnd(s: string, start: number): number {
  const open = s[start];
  const close = open === '{' ? '}' : ']';
  let depth = 0;
  let inString = false;
  for (let i = start; i < s.length; i++) {
    const c = s[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === open) depth++;
    else if (c === close && --depth === 0) return i + 1;
  }
  return -1;
}

export function extractJson(content: string): string | null {
  const trimmed = content.trim();
  const direct = tryParse(trimmed);
  if (direct !== null && trimmed !== '') return direct;
  const fenced = /```(?:json)?\s*\n?([\s\S]*?)```/i.exec(trimmed);
  if (fenced) {
    const inner = tryParse(fenced[1]!.trim());
    if (inner !== null) return inner;
  }
  for (let i = 0; i < trimmed.length; i++) {
    if (trimmed[i] !== '{' && trimmed[i] !== '[') continue;
    const end = balancedEnd(trimmed, i);
    if (end < 0) continue;
    const candidate = tryParse(trimmed.slice(i, end));
    if (candidate !== null) return candidate;
  }
  return null;
}
