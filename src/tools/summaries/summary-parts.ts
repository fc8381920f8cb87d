// The pieces every summary is built from: a concept as `system|code` plus a readable name, a quantity with its
// unit, an observation's value, a reference by name. Shared by summarize-resource.ts and the per-area summarizers.
import type { CodeableConcept, Coding, Observation, Quantity, Reference } from '@medplum/fhirtypes';
import { conceptName, type ReferenceNames } from '../medication/medication-name.ts';

export type Summary = Record<string, unknown>;

const codingText = (c: Coding) => (c.system ? `${c.system}|${c.code ?? ''}` : (c.code ?? ''));

/** First coding as `system|code` plus a display; every coding only when there are several. */
export function conceptSummary(cc: CodeableConcept | undefined, names?: ReferenceNames): Summary | undefined {
  if (!cc) return undefined;
  const codings = (cc.coding ?? []).filter((c) => c.code);
  // MIMIC writes drug names as codes of a name system (…/mimic-medication-name), with no display, or a formulary
  // code whose name `names` holds. SNOMED's semantic tag ("… (procedure)") says nothing a reader needs.
  const display = conceptName(cc, names)?.replace(/ \((procedure|disorder|finding|situation|observable entity|regime\/therapy)\)$/, '');
  return prune({
    code: codings[0] ? codingText(codings[0]) : undefined,
    display,
    codes: codings.length > 1 ? codings.map(codingText) : undefined,
  });
}

export const statusOf = (cc: CodeableConcept | undefined) => cc?.coding?.find((c) => c.code)?.code ?? cc?.text;
export const quantity = (q: Quantity | undefined) =>
  q?.value === undefined ? undefined : prune({ value: q.value, unit: q.unit ?? q.code });

export function prune(o: Summary): Summary {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0)));
}

type ObservationValue = Pick<
  Observation,
  | 'valueQuantity'
  | 'valueString'
  | 'valueCodeableConcept'
  | 'valueBoolean'
  | 'valueInteger'
  | 'valueDateTime'
  | 'valueTime'
  | 'valuePeriod'
  | 'valueRange'
  | 'valueRatio'
>;

export function observationValue(o: ObservationValue): unknown {
  if (o.valueQuantity) return quantity(o.valueQuantity);
  if (o.valueString !== undefined) return o.valueString;
  if (o.valueCodeableConcept) return conceptSummary(o.valueCodeableConcept)?.display ?? statusOf(o.valueCodeableConcept);
  if (o.valueBoolean !== undefined) return o.valueBoolean;
  if (o.valueDateTime !== undefined) return o.valueDateTime;
  if (o.valueTime !== undefined) return o.valueTime;
  if (o.valuePeriod) return prune({ start: o.valuePeriod.start, end: o.valuePeriod.end });
  if (o.valueRange) return prune({ low: quantity(o.valueRange.low), high: quantity(o.valueRange.high) });
  if (o.valueRatio) return prune({ numerator: quantity(o.valueRatio.numerator), denominator: quantity(o.valueRatio.denominator) });
  return o.valueInteger;
}

/** A referenced resource by name where one is known, keeping the reference (ids matter to the next tool call). */
export function referenced(ref: Reference | undefined, names: ReferenceNames): Summary | string | undefined {
  if (!ref?.reference) return ref?.display;
  const name = ref.display ?? names.get(ref.reference.replace(/^.*\/([A-Z][A-Za-z]+\/[^/]+)$/, '$1'));
  return name ? { display: name, reference: ref.reference } : ref.reference;
}

/** Identifiers as "<last segment of the system> <value>", e.g. MIMIC's "encounter-hosp 2xxxxxxx" (an admission, hadm_id). */
export function identifierText(ids: Array<{ system?: string; value?: string }> | undefined): string | undefined {
  const parts = (ids ?? []).filter((i) => i.value).map((i) => `${i.system?.split('/').pop() ?? ''} ${i.value}`.trim());
  return parts.length ? parts.join(', ') : undefined;
}

/** The id of a reference whose type the field name says (`encounter`, `partOf`): read_resource takes it as is. */
export const idOf = (ref: Reference | undefined) => ref?.reference?.split('/').pop();

export const noteText = (notes: Array<{ text?: string }> | undefined) => notes?.map((n) => n.text).filter(Boolean);

/** The name in a drug's summary (`{display, reference}`, a concept summary, or a bare reference). */
export const drugName = (m: Summary | string | undefined): string | undefined =>
  typeof m === 'object' ? (m.display as string | undefined) : m;
