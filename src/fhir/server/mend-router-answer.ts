// What Medplum's FhirRouter answers, mended before it leaves the embedded server: each fixup is one thing the
// router does otherwise than FHIR (or this server) says, applied in order; then a 5xx keeps its status and loses
// its words, which may name internals.
import { getStatus, isOk, serverError } from '@medplum/core';
import type { FhirResponse } from '@medplum/fhir-router';
import type { Bundle, OperationOutcome, Resource } from '@medplum/fhirtypes';
import { withUpdateOutcomes, type UpdateOutcomeOf } from './with-update-outcomes.ts';

interface MendContext {
  /** Upper case. */
  method: string;
  requestBody: unknown;
  baseUrl: string;
  updateOutcome: UpdateOutcomeOf;
}

type Fixup = (response: FhirResponse, ctx: MendContext) => FhirResponse;

/** Batch responses from Medplum carry no fullUrl; clients key on it. */
export function addFullUrls(bundle: Bundle, baseUrl: string): Bundle {
  if (!bundle.entry || !/-response$/.test(bundle.type ?? '')) return bundle;
  return {
    ...bundle,
    entry: bundle.entry.map((e) => {
      const r = e.resource;
      const fullUrl =
        r?.id && r.resourceType !== 'Bundle' && r.resourceType !== 'OperationOutcome' ? `${baseUrl}/${r.resourceType}/${r.id}` : undefined;
      return fullUrl ? { fullUrl, ...e } : e;
    }),
  };
}

/** Medplum answers allOk to every update: 201 when it created, the no-change outcome when it changed nothing. */
const updateOutcomes: Fixup = (response, ctx) =>
  withUpdateOutcomes(response, { method: ctx.method, body: ctx.requestBody }, ctx.updateOutcome);

const fullUrls: Fixup = (response, ctx) => {
  const [outcome, resource] = response;
  return resource?.resourceType === 'Bundle' ? [outcome, addFullUrls(resource as Bundle, ctx.baseUrl)] : response;
};

const FIXUPS: Fixup[] = [updateOutcomes, fullUrls];

export function mendRouterAnswer(response: FhirResponse, ctx: MendContext): { status: number; body: Resource | OperationOutcome } {
  const [outcome, resource] = FIXUPS.reduce((r, fixup) => fixup(r, ctx), response);
  const status = getStatus(outcome);
  if (status >= 500) return { status, body: serverError(new Error('Internal error in the embedded FHIR server')) };
  return { status, body: resource && isOk(outcome) ? resource : outcome };
}
