// Compact, model-friendly views of FHIR resources: the fields a clinician would read first, nothing else.
import type {
  AllergyIntolerance,
  CodeableConcept,
  Coding,
  Condition,
  DiagnosticReport,
  Encounter,
  Immunization,
  MedicationRequest,
  Observation,
  Patient,
  Procedure,
  Quantity,
  Resource,
  ServiceRequest,
} from '@medplum/fhirtypes';

type Summary = Record<string, unknown>;

const codingText = (c: Coding) => (c.system ? `${c.system}|${c.code ?? ''}` : (c.code ?? ''));

/** First coding as `system|code` plus a display; every coding only when there are several. */
function conceptSummary(cc: CodeableConcept | undefined): Summary | undefined {
  if (!cc) return undefined;
  const codings = (cc.coding ?? []).filter((c) => c.code);
  const display = cc.text ?? codings.find((c) => c.display)?.display;
  return prune({
    code: codings[0] ? codingText(codings[0]) : undefined,
    display,
    codes: codings.length > 1 ? codings.map(codingText) : undefined,
  });
}

const statusOf = (cc: CodeableConcept | undefined) => cc?.coding?.find((c) => c.code)?.code ?? cc?.text;
const quantity = (q: Quantity | undefined) => (q?.value === undefined ? undefined : prune({ value: q.value, unit: q.unit ?? q.code }));

function prune(o: Summary): Summary {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0)));
}

function observationValue(
  o: Pick<Observation, 'valueQuantity' | 'valueString' | 'valueCodeableConcept' | 'valueBoolean' | 'valueInteger'>,
): unknown {
  if (o.valueQuantity) return quantity(o.valueQuantity);
  if (o.valueString !== undefined) return o.valueString;
  if (o.valueCodeableConcept) return conceptSummary(o.valueCodeableConcept)?.display ?? statusOf(o.valueCodeableConcept);
  if (o.valueBoolean !== undefined) return o.valueBoolean;
  return o.valueInteger;
}

const summarizers: Record<string, (r: never) => Summary> = {
  Patient: (p: Patient) => {
    const name = p.name?.find((n) => n.use === 'official') ?? p.name?.[0];
    return {
      name: name ? [name.given?.join(' '), name.family].filter(Boolean).join(' ') || name.text : undefined,
      gender: p.gender,
      birthDate: p.birthDate,
      deceased: p.deceasedDateTime ?? p.deceasedBoolean,
      identifiers: p.identifier?.map((i) => prune({ system: i.system, value: i.value, type: i.type?.coding?.[0]?.code ?? i.type?.text })),
    };
  },
  Observation: (o: Observation) => ({
    date: o.effectiveDateTime ?? o.effectivePeriod?.start ?? o.effectiveInstant ?? o.issued,
    ...conceptSummary(o.code),
    value: observationValue(o),
    components: o.component?.map((c) => prune({ ...conceptSummary(c.code), value: observationValue(c) })),
    interpretation: o.interpretation?.map(statusOf).filter(Boolean),
    status: o.status,
    category: o.category?.map(statusOf).filter(Boolean),
  }),
  Condition: (c: Condition) => ({
    ...conceptSummary(c.code),
    clinicalStatus: statusOf(c.clinicalStatus),
    verificationStatus: statusOf(c.verificationStatus),
    onset: c.onsetDateTime ?? c.onsetPeriod?.start ?? c.onsetString,
    abatement: c.abatementDateTime ?? c.abatementPeriod?.start ?? c.abatementString,
    recorded: c.recordedDate,
    category: c.category?.map(statusOf).filter(Boolean),
  }),
  MedicationRequest: (m: MedicationRequest) => {
    const dosage = m.dosageInstruction?.[0];
    const dr = dosage?.doseAndRate?.[0];
    return {
      date: m.authoredOn,
      medication: conceptSummary(m.medicationCodeableConcept) ?? m.medicationReference?.display ?? m.medicationReference?.reference,
      status: m.status,
      intent: m.intent,
      dose: quantity(dr?.doseQuantity),
      rate: quantity(dr?.rateQuantity),
      route: dosage?.route?.text ?? dosage?.route?.coding?.[0]?.display ?? dosage?.route?.coding?.[0]?.code,
      dosage: dosage?.text ?? dosage?.timing?.code?.text,
      reason: [...(m.reasonCode ?? []).map((r) => conceptSummary(r)?.display), ...(m.reasonReference ?? []).map((r) => r.reference)].filter(
        Boolean,
      ),
    };
  },
  Procedure: (p: Procedure) => ({
    date: p.performedDateTime ?? p.performedPeriod?.start,
    ...conceptSummary(p.code),
    status: p.status,
    reason: p.reasonCode?.map((r) => conceptSummary(r)?.display).filter(Boolean),
  }),
  Encounter: (e: Encounter) => ({
    date: e.period?.start,
    end: e.period?.end,
    status: e.status,
    class: e.class?.code,
    type: e.type?.map((t) => conceptSummary(t)?.display).filter(Boolean),
    reason: e.reasonCode?.map((r) => conceptSummary(r)?.display).filter(Boolean),
    provider: e.serviceProvider?.display,
  }),
  AllergyIntolerance: (a: AllergyIntolerance) => ({
    ...conceptSummary(a.code),
    clinicalStatus: statusOf(a.clinicalStatus),
    verificationStatus: statusOf(a.verificationStatus),
    criticality: a.criticality,
    category: a.category,
    reactions: a.reaction?.flatMap((r) => r.manifestation.map((m) => conceptSummary(m)?.display)).filter(Boolean),
    recorded: a.recordedDate,
  }),
  Immunization: (i: Immunization) => ({
    date: i.occurrenceDateTime ?? i.occurrenceString,
    ...conceptSummary(i.vaccineCode),
    status: i.status,
  }),
  DiagnosticReport: (d: DiagnosticReport) => ({
    date: d.effectiveDateTime ?? d.effectivePeriod?.start ?? d.issued,
    ...conceptSummary(d.code),
    status: d.status,
    category: d.category?.map(statusOf).filter(Boolean),
    results: d.result?.map((r) => r.reference).filter(Boolean),
    conclusion: d.conclusion,
  }),
  ServiceRequest: (s: ServiceRequest) => ({
    date: s.authoredOn,
    ...conceptSummary(s.code),
    status: s.status,
    intent: s.intent,
    priority: s.priority,
    occurrence: s.occurrenceDateTime,
    note: s.note?.map((n) => n.text).filter(Boolean),
  }),
};

export function summarizeResource(resource: Resource): Summary {
  const specific = summarizers[resource.resourceType] as ((r: Resource) => Summary) | undefined;
  const body = specific ? specific(resource) : { lastUpdated: resource.meta?.lastUpdated };
  return prune({ resourceType: resource.resourceType, id: resource.id, ...body });
}
