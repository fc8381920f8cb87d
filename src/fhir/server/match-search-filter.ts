// FHIR search matching for one filter against one resource. Medplum's matchesSearchRequest does substring
// matching for strings and no bare-id references; these are the R4 rules (strings: starts-with on any part,
// accent- and case-insensitive; dates: range comparison with prefixes).
import {
  convertToSearchableDates,
  convertToSearchableNumbers,
  convertToSearchableQuantities,
  convertToSearchableReferences,
  convertToSearchableTokens,
  toPeriod,
  type TypedValue,
} from '@medplum/core';
import type { Resource } from '@medplum/fhirtypes';
import type { SearchFilter, SearchValue } from './parse-search-query.ts';
import { normaliseReference, searchValues } from '../../vocabulary/fhir/search-values.ts';

function normaliseText(s: string): string {
  return s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
}

function leafStrings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => leafStrings(v, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) if (k !== 'extension' && k !== 'period' && k !== 'use') leafStrings(v, out);
  }
  return out;
}

/** The reference a filter value means: `Type/id`, or `*\/id` when the target type is open. */
export function filterReference(filter: SearchFilter, value: string): string {
  if (value.includes('/')) return normaliseReference(value);
  if (filter.modifier && filter.modifier !== 'identifier') return `${filter.modifier}/${value}`;
  const targets = filter.param.target ?? [];
  return targets.length === 1 ? `${targets[0]}/${value}` : `*/${value}`;
}

function matchesReference(values: TypedValue[], filter: SearchFilter, v: string): boolean {
  if (filter.modifier === 'identifier') {
    const bar = v.indexOf('|');
    const [system, id] = bar < 0 ? [undefined, v] : [v.slice(0, bar), v.slice(bar + 1)];
    return values.some((t) => {
      const identifier = (t.value as { identifier?: { system?: string; value?: string } })?.identifier;
      return identifier?.value === id && (system === undefined || identifier.system === system);
    });
  }
  const wanted = filterReference(filter, v);
  const refs = convertToSearchableReferences(values).map(normaliseReference);
  return wanted.startsWith('*/') ? refs.some((r) => r.endsWith(wanted.slice(1))) : refs.includes(wanted);
}

function matchesToken(values: TypedValue[], filter: SearchFilter, v: string): boolean {
  if (filter.modifier === 'text') {
    const wanted = normaliseText(v);
    return values.some((t) => {
      const cc = t.value as { text?: string; display?: string; coding?: Array<{ display?: string }> };
      const texts = [cc?.text, cc?.display, ...(cc?.coding ?? []).map((c) => c.display)];
      return texts.some((s) => s && normaliseText(s).startsWith(wanted));
    });
  }
  const bar = v.indexOf('|');
  const system = bar < 0 ? undefined : v.slice(0, bar).toLowerCase();
  const code = (bar < 0 ? v : v.slice(bar + 1)).toLowerCase();
  return convertToSearchableTokens(values).some((token) => {
    const value = token.value?.toLowerCase();
    if (system === undefined) return value === code;
    if (system === '') return !token.system && value === code;
    return token.system?.toLowerCase() === system && (code === '' || value === code);
  });
}

function matchesString(values: TypedValue[], filter: SearchFilter, v: string): boolean {
  const strings = values.flatMap((t) => leafStrings(t.value));
  if (filter.modifier === 'exact') return strings.includes(v);
  const wanted = normaliseText(v);
  if (filter.modifier === 'contains') return strings.some((s) => normaliseText(s).includes(wanted));
  return strings.some((s) => normaliseText(s).startsWith(wanted));
}

function compareRange(prefix: string, start: string, end: string, fStart: string, fEnd: string): boolean {
  const contained = start >= fStart && end <= fEnd;
  switch (prefix) {
    case 'eq':
      return contained;
    case 'ne':
      return !contained;
    case 'gt':
      return end > fEnd;
    case 'lt':
      return start < fStart;
    case 'ge':
      return end > fEnd || contained;
    case 'le':
      return start < fStart || contained;
    case 'sa':
      return start > fEnd;
    case 'eb':
      return end < fStart;
    default:
      return start <= fEnd && end >= fStart; // ap: overlaps
  }
}

function matchesDate(values: TypedValue[], v: SearchValue): boolean {
  const f = toPeriod(v.value);
  if (!f?.start || !f.end) return false;
  return convertToSearchableDates(values).some((p) => compareRange(v.prefix, p.start ?? '0000', p.end ?? '9999', f.start!, f.end!));
}

function compareNumber(prefix: string, lo: number, hi: number, n: number): boolean {
  switch (prefix) {
    case 'ne':
      return !(lo <= n && n <= hi);
    case 'gt':
      return hi > n;
    case 'lt':
      return lo < n;
    case 'ge':
      return hi >= n;
    case 'le':
      return lo <= n;
    case 'ap':
      return lo <= n * 1.1 && hi >= n * 0.9;
    default:
      return lo <= n && n <= hi;
  }
}

function matchesQuantity(values: TypedValue[], v: SearchValue): boolean {
  const [num, system, code] = v.value.split('|');
  const n = Number(num);
  return convertToSearchableQuantities(values).some((q) => {
    if (q.value === undefined) return false;
    if (system && q.system !== system) return false;
    if (code && q.code !== code && q.unit !== code) return false;
    return compareNumber(v.prefix, q.value, q.value, n);
  });
}

function matchesOne(values: TypedValue[], filter: SearchFilter, v: SearchValue): boolean {
  switch (filter.param.type) {
    case 'reference':
      return matchesReference(values, filter, v.value);
    case 'token':
      return matchesToken(values, filter, v.value);
    case 'string':
      return matchesString(values, filter, v.value);
    case 'date':
      return matchesDate(values, v);
    case 'number':
      return convertToSearchableNumbers(values).some(
        ([lo, hi]) => lo !== undefined && compareNumber(v.prefix, lo, hi ?? lo, Number(v.value)),
      );
    case 'quantity':
      return matchesQuantity(values, v);
    case 'uri':
      return values.some((t) => t.value === v.value);
    default:
      return false;
  }
}

export function matchesFilter(resource: Resource, filter: SearchFilter): boolean {
  const values = searchValues(resource, filter.param);
  if (filter.modifier === 'missing') return (values.length === 0) === (filter.values[0].value === 'true');
  const any = filter.values.some((v) => matchesOne(values, filter, v));
  return filter.modifier === 'not' ? !any : any;
}
