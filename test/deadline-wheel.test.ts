import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDeadlineWheel } from '../src/http/deadline-wheel.ts';

afterEach(() => vi.useRealTimers());

describe('createDeadlineWheel', () => {
  it('expires each deadline once, within a tick, and never one that was untracked', () => {
    vi.useFakeTimers();
    const wheel = createDeadlineWheel({ tickMs: 100 });
    const fired: string[] = [];
    wheel.track(250, () => fired.push('a'));
    const untrack = wheel.track(250, () => fired.push('b'));
    wheel.track(1000, () => fired.push('c'));
    untrack();
    vi.advanceTimersByTime(200);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(100);
    expect(fired).toEqual(['a']);
    vi.advanceTimersByTime(800);
    expect(fired).toEqual(['a', 'c']);
    expect(vi.getTimerCount()).toBe(0); // the shared timer stops when nothing is pending
  });
});
