// AUDIT_KEY_MAX_BYTES_PER_MINUTE: the audit bytes one key may cause in a sliding minute, in this process. Records
// are never dropped (a request under way writes all of its own); past the budget the key's next requests are
// refused with a 429 until enough of the minute has passed, so no key can fill the disk at the request rate.
import type { RateDecision } from '../rate-limit/rate-limit.ts';

const WINDOW_MS = 60_000;
/** Writes within one bucket are summed, so a busy key costs a bounded list. */
const BUCKET_MS = 1000;

export interface AuditBudget {
  spend(callerId: string, bytes: number): void;
  /** Whether `callerId` may start another request now. */
  check(callerId: string): RateDecision;
}

export function createAuditBudget({ perMinute, now = Date.now }: { perMinute: number; now?: () => number }): AuditBudget {
  const spent = new Map<string, Array<{ at: number; bytes: number }>>();
  const live = (callerId: string, t: number) => {
    const buckets = (spent.get(callerId) ?? []).filter((b) => t - b.at < WINDOW_MS);
    if (buckets.length) spent.set(callerId, buckets);
    else spent.delete(callerId);
    return buckets;
  };
  return {
    spend(callerId, bytes) {
      if (perMinute === 0) return;
      const t = now();
      const buckets = live(callerId, t);
      const last = buckets.at(-1);
      if (last && t - last.at < BUCKET_MS) last.bytes += bytes;
      else spent.set(callerId, [...buckets, { at: t, bytes }]);
    },
    check(callerId) {
      if (perMinute === 0) return { ok: true, retryAfterS: 0 };
      const t = now();
      const buckets = live(callerId, t);
      let total = buckets.reduce((n, b) => n + b.bytes, 0);
      if (total < perMinute) return { ok: true, retryAfterS: 0 };
      // Until enough of the oldest buckets leave the window to bring the total under the budget.
      for (const b of buckets) {
        total -= b.bytes;
        if (total < perMinute) return { ok: false, retryAfterS: Math.max(1, Math.ceil((b.at + WINDOW_MS - t) / 1000)) };
      }
      return { ok: false, retryAfterS: 60 };
    },
  };
}
