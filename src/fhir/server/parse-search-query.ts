// Turns a search query string into a validated SearchQuery. Anything this server cannot evaluate exactly
// (unknown parameters, modifiers, chains, includes, malformed values) is a 400 naming the parameter: a
// silently ignored filter would return too much, and a clinical agent would believe it.
import { OperationOutcomeError, badRequest } from '@medplum/core';
import type { SearchParameter } from '@medplum/fhirtypes';
import { findSearchParameter } from '../../vocabulary/fhir/search-values.ts';

export interface SearchValue {
  /** eq ne gt lt ge le sa eb ap, for date, number and quantity parameters; otherwise 'eq'. */
  prefix: string;
  value: string;
}

export interface SearchFilter {
  code: string;
  param: SearchParameter;
  /** exact | contains | missing | not | text | identifier | a target resource type (references). */
  modifier?: string;
  /** Alternatives (comma-separated in the query); a filter matches when any matches. */
  values: SearchValue[];
}

export interface SortRule {
  code: string;
  param: SearchParameter;
  descending: boolean;
}

/** `_include` (source is the searched type) or `_revinclude` (source points at a result): Source:param[:Target]. */
export interface IncludeRule {
  sourceType: string;
  code: string;
  param: SearchParameter;
  targetType?: string;
  /** `:iterate`: applied again to what was included, until nothing new comes in. */
  iterate: boolean;
}

export interface SearchQuery {
  resourceType: string;
  filters: SearchFilter[];
  sort: SortRule[];
  count: number;
  offset: number;
  total: 'none' | 'estimate' | 'accurate';
  /** _summary=count: the total only. */
  countOnly: boolean;
  elements?: string[];
  includes: IncludeRule[];
  revIncludes: IncludeRule[];
  /** The query as understood, without _offset: the basis of self/next/previous links. */
  linkParams: Array<[string, string]>;
}

export interface SearchLimits {
  defaultPageSize: number;
  maxPageSize: number;
}

const PREFIXES = new Set(['eq', 'ne', 'gt', 'lt', 'ge', 'le', 'sa', 'eb', 'ap']);
const MODIFIERS: Record<string, Set<string>> = {
  string: new Set(['exact', 'contains', 'missing']),
  token: new Set(['not', 'text', 'missing']),
  reference: new Set(['missing', 'identifier']),
  date: new Set(['missing']),
  number: new Set(['missing']),
  quantity: new Set(['missing']),
  uri: new Set(['missing']),
};
// Month 01-12, day 01-31, hour 00-23, minute and second 00-59: "2020-13-45" is a 400, not an empty result.
const DATE = /^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01])(T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?)?)?$/;
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const FORMATS = new Set(['json', 'application/json', 'application/fhir+json']);
const UNSUPPORTED = new Set([
  '_has',
  '_type',
  '_filter',
  '_query',
  '_text',
  '_content',
  '_list',
  '_contained',
  '_containedType',
  '_cursor',
]);

function fail(message: string, parameter: string): never {
  throw new OperationOutcomeError(badRequest(message, parameter));
}

/** Splits on commas not escaped with a backslash. */
export function splitSearchValues(raw: string): string[] {
  const out: string[] = [];
  let current = '';
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === '\\' && i + 1 < raw.length) current += raw[++i];
    else if (raw[i] === ',') {
      out.push(current);
      current = '';
    } else current += raw[i];
  }
  out.push(current);
  return out;
}

export function nonNegativeInt(raw: string, name: string): number {
  if (!/^\d{1,9}$/.test(raw)) fail(`Invalid ${name} value '${raw}': expected a non-negative integer`, name);
  return Number(raw);
}

function parseValue(param: SearchParameter, key: string, value: string, modifier?: string): SearchValue {
  if (modifier === 'missing') {
    if (value !== 'true' && value !== 'false') fail(`Invalid value for ${key}: expected true or false`, key);
    return { prefix: 'eq', value };
  }
  if (param.type !== 'date' && param.type !== 'number' && param.type !== 'quantity') return { prefix: 'eq', value };
  const prefix = /^[a-z]{2}/.exec(value)?.[0];
  const hasPrefix = prefix !== undefined && PREFIXES.has(prefix);
  const rest = hasPrefix ? value.slice(2) : value;
  const ok = param.type === 'date' ? DATE.test(rest) : NUMBER.test(param.type === 'quantity' ? rest.split('|')[0] : rest);
  if (!ok) fail(`Invalid ${param.type} value '${value}' for search parameter '${key}'`, key);
  return { prefix: hasPrefix ? prefix! : 'eq', value: rest };
}

// The query's arrays are pushed, not mapped: once TurboFan inlines `map` into an optimised caller, the array it
// makes is holey where the unoptimised builtin's is packed, and the search code optimised on the packed one
// deoptimised on it (docs/benchmarks.md, "What the 10k tail is").
function parseValues(param: SearchParameter, key: string, raw: string, modifier?: string): SearchValue[] {
  const values: SearchValue[] = [];
  for (const value of splitSearchValues(raw)) values.push(parseValue(param, key, value, modifier));
  return values;
}

function parseFilter(resourceType: string, key: string, raw: string): SearchFilter {
  const colon = key.indexOf(':');
  const code = colon < 0 ? key : key.slice(0, colon);
  const modifier = colon < 0 ? undefined : key.slice(colon + 1);
  if (code.includes('.')) fail(`Chained search parameter '${key}' is not supported`, key);
  const param = findSearchParameter(resourceType, code);
  if (!param) fail(`Unknown search parameter '${code}' for ${resourceType}`, key);
  if (param.type === 'composite' || param.type === 'special') fail(`Search parameter '${code}' (${param.type}) is not supported`, key);
  if (modifier !== undefined) {
    const typeModifier = param.type === 'reference' && (param.target ?? []).includes(modifier as never);
    if (!typeModifier && !MODIFIERS[param.type as string]?.has(modifier)) {
      fail(`Unsupported modifier ':${modifier}' on search parameter '${code}' (${param.type})`, key);
    }
  }
  return { code, param, modifier, values: parseValues(param, key, raw, modifier) };
}

function parseInclude(resourceType: string, key: string, raw: string): { rule: IncludeRule; reverse: boolean } {
  const [base, modifier] = key.split(':');
  const reverse = base === '_revinclude';
  if (modifier !== undefined && modifier !== 'iterate') fail(`Unsupported modifier on '${key}' (only :iterate)`, key);
  const parts = raw.split(':');
  if (parts.includes('*')) fail(`'${key}=${raw}': '*' is not supported; name the reference parameters`, key);
  if (parts.length < 2 || parts.length > 3) fail(`Invalid ${base} value '${raw}': expected SourceType:search-parameter[:TargetType]`, key);
  const [sourceType, code, targetType] = parts;
  const param = findSearchParameter(sourceType, code);
  if (!param) fail(`Invalid ${base} value '${raw}': unknown search parameter '${code}' for ${sourceType}`, key);
  if (param.type !== 'reference') fail(`Invalid ${base} value '${raw}': '${code}' is not a reference parameter`, key);
  const targets = (param.target ?? []) as string[];
  if (targetType !== undefined && !targets.includes(targetType))
    fail(`Invalid ${base} value '${raw}': ${code} cannot point at ${targetType}`, key);
  const iterate = modifier === 'iterate';
  // Without :iterate an _include starts from the searched type, and a _revinclude must be able to point at it.
  if (!iterate && !reverse && sourceType !== resourceType)
    fail(`Invalid _include value '${raw}': ${resourceType} is searched, not ${sourceType}`, key);
  if (!iterate && reverse && targets.length > 0 && !targets.includes(targetType ?? resourceType)) {
    fail(`Invalid _revinclude value '${raw}': ${sourceType}.${code} never points at ${resourceType}`, key);
  }
  return { rule: { sourceType, code, param, targetType, iterate }, reverse };
}

function parseSort(resourceType: string, raw: string): SortRule[] {
  const rules: SortRule[] = [];
  for (const field of raw.split(',')) {
    const descending = field.startsWith('-');
    const code = descending ? field.slice(1) : field;
    const param = findSearchParameter(resourceType, code);
    if (!param || param.type === 'composite' || param.type === 'special') fail(`Cannot sort ${resourceType} by '${code}'`, '_sort');
    rules.push({ code, param, descending });
  }
  return rules;
}

export function parseSearchQuery(resourceType: string, pairs: Iterable<[string, string]>, limits: SearchLimits): SearchQuery {
  const query: SearchQuery = {
    resourceType,
    filters: [],
    sort: [],
    count: limits.defaultPageSize,
    offset: 0,
    total: 'accurate',
    countOnly: false,
    includes: [],
    revIncludes: [],
    linkParams: [],
  };
  for (const [key, raw] of pairs) {
    const base = key.split(':')[0];
    if (key === '_offset') {
      query.offset = nonNegativeInt(raw, key);
      continue;
    }
    if (UNSUPPORTED.has(base)) fail(`Search parameter '${key}' is not supported by this server`, key);
    switch (key) {
      case '_count':
        query.count = Math.min(nonNegativeInt(raw, key), limits.maxPageSize);
        query.linkParams.push([key, String(query.count)]);
        continue;
      case '_sort':
        query.sort = parseSort(resourceType, raw);
        break;
      case '_total':
        if (raw !== 'none' && raw !== 'estimate' && raw !== 'accurate') fail(`Invalid _total value '${raw}'`, key);
        query.total = raw;
        break;
      case '_summary':
        if (raw === 'count') query.countOnly = true;
        else if (raw !== 'false') fail(`_summary=${raw} is not supported (use count or false)`, key);
        break;
      case '_elements':
        query.elements = raw
          .split(',')
          .map((e) => e.trim())
          .filter(Boolean);
        if (!query.elements.every((e) => /^[a-zA-Z][a-zA-Z0-9]*$/.test(e))) fail(`Invalid _elements value '${raw}'`, key);
        break;
      case '_format':
        if (!FORMATS.has(raw)) fail(`Unsupported _format '${raw}': only JSON is served`, key);
        break;
      case '_pretty':
        break;
      case '_include':
      case '_include:iterate':
      case '_revinclude':
      case '_revinclude:iterate': {
        const { rule, reverse } = parseInclude(resourceType, key, raw);
        (reverse ? query.revIncludes : query.includes).push(rule);
        break;
      }
      default:
        if (raw === '') continue; // a parameter with no value constrains nothing
        if (base.startsWith('_') && !findSearchParameter(resourceType, base))
          fail(`Search parameter '${key}' is not supported by this server`, key);
        query.filters.push(parseFilter(resourceType, key, raw));
    }
    query.linkParams.push([key, raw]);
  }
  return query;
}
