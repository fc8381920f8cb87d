// Bounded work per request: a batch or transaction may hold at most `max` entries that read or search (GET, HEAD,
// or a conditional write, whose URL is a search). Their answers are what grows without bound: 300 searches of 1,000
// resources each from a 20 KB request. Plain writes are bounded by the body limit instead, so loads keep their size.
import type { Bundle } from '@medplum/fhirtypes';

const reads = (e: NonNullable<Bundle['entry']>[number]): boolean => {
  const method = e?.request?.method;
  return method === 'GET' || method === 'HEAD' || (typeof e?.request?.url === 'string' && e.request.url.includes('?'));
};

/** The refusal's words when the bundle has more reading entries than `max`; undefined otherwise. */
export function bundleEntryLimitProblem(body: unknown, max: number): string | undefined {
  const bundle = body as Bundle | undefined;
  if (bundle?.resourceType !== 'Bundle' || (bundle.type !== 'transaction' && bundle.type !== 'batch')) return undefined;
  const n = (bundle.entry ?? []).filter(reads).length;
  if (n <= max) return undefined;
  return `This ${bundle.type} has ${n} entries that read or search; the limit is ${max} (FHIR_MAX_BUNDLE_ENTRIES). Send them in several bundles.`;
}
