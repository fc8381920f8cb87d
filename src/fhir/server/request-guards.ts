// What the embedded server refuses before Medplum's FhirRouter sees a request: each guard names the problem as
// an OperationOutcome (with its status) or passes. They run in order; the first refusal is the answer.
import { badRequest, forbidden, getStatus, normalizeOperationOutcome } from '@medplum/core';
import { createRequire } from 'node:module';
import type * as GraphQL from 'graphql';
import type { Bundle, OperationOutcome, Resource } from '@medplum/fhirtypes';
import { withDiagnostics } from '../../vocabulary/fhir/with-diagnostics.ts';
import { bundleEntryLimitProblem } from './bundle-entry-limit.ts';
import { assertNotTooDeep } from './resource-verdict.mjs';

export interface GuardedRequest {
  /** Upper case. */
  method: string;
  /** Decoded path segments below the FHIR base. */
  segments: string[];
  body: unknown;
}

interface GuardLimits {
  maxBundleEntries: number;
}

type RequestGuard = (req: GuardedRequest, limits: GuardLimits) => OperationOutcome | undefined;

const isBase = (req: GuardedRequest) => req.method === 'POST' && req.segments.length === 0;

/** What Medplum would trip over in a posted batch/transaction, in words a client can act on. */
const bundleEntries: RequestGuard = (req) => {
  const bundle = req.body as Bundle | undefined;
  if (!isBase(req) || bundle?.resourceType !== 'Bundle' || (bundle.type !== 'transaction' && bundle.type !== 'batch')) return undefined;
  for (const [i, e] of (bundle.entry ?? []).entries()) {
    const method = e.request?.method;
    if (!method || !e.request?.url) return badRequest(`Bundle.entry[${i}].request needs a method and a url`);
    if ((method === 'POST' || method === 'PUT') && !e.resource?.resourceType)
      return badRequest(`Bundle.entry[${i}] (${method}) has no resource`);
  }
  return undefined;
};

const bundleEntryLimit: RequestGuard = (req, limits) => {
  const problem = isBase(req) ? bundleEntryLimitProblem(req.body, limits.maxBundleEntries) : undefined;
  return problem ? badRequest(problem) : undefined;
};

/** graphql-js (124 CommonJS files, ~70 ms at boot), required on the first $graphql request. */
let graphql: typeof GraphQL | undefined;

/** Writes go through the REST interactions, where they are checked. */
const graphqlMutation: RequestGuard = (req) => {
  if (req.method !== 'POST' || req.segments.length !== 1 || req.segments[0] !== '$graphql') return undefined;
  const query = (req.body as { query?: unknown } | undefined)?.query;
  if (typeof query !== 'string') return undefined;
  let document: GraphQL.DocumentNode;
  try {
    graphql ??= createRequire(import.meta.url)('graphql') as typeof GraphQL;
    document = graphql.parse(query);
  } catch {
    return undefined; // Medplum answers a syntax error itself, running nothing.
  }
  const mutation = document.definitions.some((d) => d.kind === 'OperationDefinition' && d.operation !== 'query');
  return mutation ? withDiagnostics(forbidden, 'GraphQL mutations are refused here: write through the REST interactions') : undefined;
};

// Medplum's router walks a body recursively (urn: references in a transaction) before the store validates it:
// a body nested past the validator's limit gets the validator's clear 400 first, never a stack overflow.
const deepBody: RequestGuard = (req) => {
  const resource = req.body as Resource | undefined;
  if (!resource || typeof resource !== 'object' || typeof resource.resourceType !== 'string') return undefined;
  const parts = resource.resourceType === 'Bundle' ? ((resource as Bundle).entry ?? []).map((e) => e?.resource) : [resource];
  try {
    for (const part of parts) if (part && typeof part === 'object') assertNotTooDeep(part);
  } catch (error) {
    return normalizeOperationOutcome(error);
  }
  return undefined;
};

const REQUEST_GUARDS: RequestGuard[] = [bundleEntries, bundleEntryLimit, graphqlMutation, deepBody];

/** The first guard's refusal and its HTTP status, or undefined when every guard passes. */
export function refuseRequest(req: GuardedRequest, limits: GuardLimits): { status: number; outcome: OperationOutcome } | undefined {
  for (const guard of REQUEST_GUARDS) {
    const outcome = guard(req, limits);
    if (outcome) return { status: getStatus(outcome), outcome };
  }
  return undefined;
}
