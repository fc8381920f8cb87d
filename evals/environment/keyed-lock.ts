/** Serializes work per key (e.g. per patient on a shared store). Keys are taken in sorted order: no deadlock. */
export class KeyedLock {
  private tails = new Map<string, Promise<void>>();

  async acquire(keys: string[]): Promise<() => void> {
    const releases: Array<() => void> = [];
    for (const key of [...new Set(keys)].sort()) {
      const prev = this.tails.get(key) ?? Promise.resolve();
      let release!: () => void;
      const next = new Promise<void>((r) => (release = r));
      const tail = prev.then(() => next);
      this.tails.set(key, tail);
      await prev;
      releases.push(() => {
        release();
        if (this.tails.get(key) === tail) this.tails.delete(key);
      });
    }
    return () => releases.forEach((r) => r());
  }
}
