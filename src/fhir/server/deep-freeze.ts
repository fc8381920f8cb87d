// Stored resources are shared by forks, search caches and responses; freezing makes an accidental
// mutation by any of them throw instead of silently corrupting the store.
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
