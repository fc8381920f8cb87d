// A drug's name from wherever the data keeps it. Real MIMIC-IV on FHIR keeps a Medication's name only in an
// identifier of its `…/mimic-medication-name` code system (code.coding holds the NDC or a formulary code, no
// display), names a mix by nothing but its ingredients, and writes provider orders' drugs as codes of a name
// system. A bare NDC is what a model cannot read, so it is the last resort, used only when no name exists.
import type { CodeableConcept, Coding, Medication } from '@medplum/fhirtypes';

/** `Type/id` → a name, and `code:<system>|<code>` → the name of the drug that code stands for. */
export type ReferenceNames = ReadonlyMap<string, string>;

/**
 * Systems whose codes (or identifier values) are readable names: MIMIC's `mimic-medication-name`, and its provider
 * IV orders' `mimic-medication-poe-iv` ("IV therapy", "TPN": the kind of order, all the record says).
 */
const NAME_SYSTEM = /(?:^|[-/])(?:(?:medication-)?name|medication-poe-iv)$/;
export const isNameSystem = (system: string | undefined) => NAME_SYSTEM.test(system ?? '');

/** The key under which `names` holds the drug a coding stands for (see medication-code-names.ts). */
export const codeKey = (c: Pick<Coding, 'system' | 'code'>) => `code:${c.system ?? ''}|${c.code ?? ''}`;

/** A concept's own name: its text, a coding's display, the code of a name system; then what a code stands for. */
export function conceptName(cc: CodeableConcept | undefined, names: ReferenceNames = new Map()): string | undefined {
  if (!cc) return undefined;
  const codings = (cc.coding ?? []).filter((c) => c.code);
  return (
    cc.text ??
    codings.find((c) => c.display)?.display ??
    codings.find((c) => isNameSystem(c.system))?.code ??
    codings.map((c) => names.get(codeKey(c))).find(Boolean)
  );
}

/** A mix's identifier joins its parts as `name--formulary--ndc_name--formulary` (MIMIC's `medication-mix`). */
function mixLabelName(m: Medication): string | undefined {
  const label = m.identifier?.find((i) => /medication-mix$/.test(i.system ?? ''))?.value;
  if (!label) return undefined;
  const parts = label.split('_').map((p) => p.split('--')[0].trim());
  return parts.every(Boolean) ? parts.join(' + ') : undefined;
}

/** A Medication's name: its own concept, a name identifier, its ingredients' names joined with " + ", a mix label. */
export function medicationName(m: Medication, names: ReferenceNames = new Map()): string | undefined {
  const own = conceptName(m.code) ?? m.identifier?.find((i) => i.value && isNameSystem(i.system))?.value;
  if (own) return own;
  const parts = (m.ingredient ?? []).map((i) => conceptName(i.itemCodeableConcept, names) ?? names.get(i.itemReference?.reference ?? ''));
  if (parts.length && parts.every(Boolean)) return parts.join(' + ');
  return (
    mixLabelName(m) ?? conceptName(m.code, names) ?? m.code?.coding?.find((c) => c.code)?.code ?? m.identifier?.find((i) => i.value)?.value
  );
}
