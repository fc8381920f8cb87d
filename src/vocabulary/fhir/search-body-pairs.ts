// The name/value pairs of a POST search body: a form string, or a JSON object whose values are strings (or lists of
// them). A nested value is no search value: it comes back as `undefined`, never stringified, because a deeply
// nested array recurses in Array.prototype.toString until the stack overflows.
export function searchBodyPairs(body: unknown): Array<[string, string | undefined]> {
  if (typeof body === 'string') return [...new URLSearchParams(body)];
  if (!body || typeof body !== 'object') return [];
  return Object.entries(body).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x): [string, string | undefined] => [k, scalar(x)]));
}

function scalar(x: unknown): string | undefined {
  if (x == null) return '';
  return typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean' ? String(x) : undefined;
}
