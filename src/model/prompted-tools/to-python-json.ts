// JSON as Hugging Face chat templates print it (`tojson` is Python's json.dumps): ", " and ": " separators,
// non-ASCII kept. Open models saw their tool signatures and past calls in exactly this spacing during training.

export function toPythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => toPythonJson(v === undefined ? null : v)).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const fields: string[] = [];
    for (const [key, v] of Object.entries(value)) {
      if (v !== undefined && typeof v !== 'function') fields.push(`${JSON.stringify(key)}: ${toPythonJson(v)}`);
    }
    return `{${fields.join(', ')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
