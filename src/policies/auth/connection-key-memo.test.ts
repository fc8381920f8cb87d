// The guard's per-connection key memory (issue 30): a repeated header on a connection is not hashed again, and
// nothing else is taken from the memory.
import { describe, expect, it } from 'vitest';
import { connectionKeyMemo } from './connection-key-memo.ts';
import { plainKeyAccess } from './key-access.ts';

const ada = plainKeyAccess('ada', { writes: false, audited: true });

function memo() {
  const resolved: Array<string | undefined> = [];
  const access = connectionKeyMemo((header) => {
    resolved.push(header);
    return header === 'Bearer ada-key' ? ada : undefined;
  });
  return { access, resolved };
}

describe('connectionKeyMemo', () => {
  it('resolves a header once per connection while it repeats', () => {
    const { access, resolved } = memo();
    const one = {};
    const two = {};
    expect([access(one, 'Bearer ada-key'), access(one, 'Bearer ada-key'), access(one, 'Bearer ada-key')]).toEqual([ada, ada, ada]);
    expect(resolved).toEqual(['Bearer ada-key']);
    expect(access(two, 'Bearer ada-key')).toBe(ada);
    expect(resolved).toHaveLength(2);
  });

  it('resolves afresh a header that differs, by a byte or by its length, and forgets on a refusal', () => {
    const { access, resolved } = memo();
    const conn = {};
    access(conn, 'Bearer ada-key');
    expect(access(conn, 'Bearer ada-kez')).toBeUndefined();
    expect(access(conn, 'Bearer ada-ke')).toBeUndefined();
    expect(access(conn, 'Bearer ada-key ')).toBeUndefined();
    expect(access(conn, undefined)).toBeUndefined();
    expect(resolved).toEqual(['Bearer ada-key', 'Bearer ada-kez', 'Bearer ada-ke', 'Bearer ada-key ', undefined]);
    // After a refusal the connection remembers nothing: the good key is resolved again.
    expect(access(conn, 'Bearer ada-key')).toBe(ada);
    expect(resolved).toHaveLength(6);
    // A refused header is never remembered.
    access(conn, 'Bearer nope');
    access(conn, 'Bearer nope');
    expect(resolved.filter((h) => h === 'Bearer nope')).toHaveLength(2);
  });

  it('remembers nothing without a connection', () => {
    const { access, resolved } = memo();
    access(undefined, 'Bearer ada-key');
    access(undefined, 'Bearer ada-key');
    expect(resolved).toHaveLength(2);
  });
});
