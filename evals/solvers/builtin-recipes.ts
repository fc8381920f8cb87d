// Reference recipes for the built-in suite: each reads through the FhirClient, applies the rule from
// suites/clinical-rules.ts and writes what the instruction asks for. Parameters come from the scenario.
import type { Condition, MedicationRequest, Observation, Patient } from '@medplum/fhirtypes';
import { z } from 'zod';
import type { FhirClient } from '../../src/fhir/client/fhir-client.ts';
import type { SolverContext } from '../task.ts';
import { medicationWrite, serviceWrite, vitalWrite } from '../suites/builtin-writes.ts';
import {
  ageAt,
  latestWithin,
  magnesiumDose,
  meanWithin,
  observationPoint,
  potassiumDose,
  round,
  trendOf,
  type Point,
} from '../suites/clinical-rules.ts';
import type { RecipeFn, TraceFn } from './recipe.ts';

const CodingSchema = z.object({ system: z.string(), code: z.string(), display: z.string().optional() });

async function points(fhir: FhirClient, patient: string, c: { system: string; code: string }, trace: TraceFn): Promise<Point[]> {
  trace('search_observations', { patient, code: `${c.system}|${c.code}` });
  const { resources } = await fhir.searchResources<Observation>('Observation', { patient, code: `${c.system}|${c.code}` });
  return resources
    .filter((o) => o.code?.coding?.some((x) => x.code === c.code))
    .map(observationPoint)
    .filter((p): p is Point => p !== undefined);
}

const nowOf = (ctx: SolverContext) => ctx.now().getTime();

async function create(ctx: SolverContext, trace: TraceFn, tool: string, resource: Parameters<FhirClient['createResource']>[0]) {
  const created = await ctx.fhir.createResource(resource);
  trace(tool, { resourceType: resource.resourceType }, [{ resourceType: created.resourceType, id: created.id! }]);
}

export const builtinRecipes: Record<string, RecipeFn> = {
  async 'lookup-patient'(params, ctx, trace) {
    const p = z.object({ given: z.string(), family: z.string(), birthDate: z.string() }).parse(params);
    trace('find_patients', p);
    const { resources } = await ctx.fhir.searchResources<Patient>('Patient', { given: p.given, family: p.family, birthdate: p.birthDate });
    const exact = resources.filter(
      (r) => r.birthDate === p.birthDate && r.name?.some((n) => n.family === p.family && n.given?.includes(p.given)),
    );
    return exact.length ? [exact.map((r) => r.id!).sort()[0]] : ['Patient not found'];
  },

  async 'patient-age'(params, ctx, trace) {
    const { patient } = z.object({ patient: z.string() }).parse(params);
    trace('read_resource', { resourceType: 'Patient', id: patient });
    const pt = await ctx.fhir.readResource<Patient>('Patient', patient);
    return [ageAt(pt.birthDate!, ctx.scenario.context.now)];
  },

  async 'latest-lab'(params, ctx, trace) {
    const p = z.object({ patient: z.string(), lab: CodingSchema, windowDays: z.number().optional() }).parse(params);
    const last = latestWithin(await points(ctx.fhir, p.patient, p.lab, trace), nowOf(ctx), p.windowDays);
    return [last ? last.value : -1];
  },

  async 'average-lab'(params, ctx, trace) {
    const p = z.object({ patient: z.string(), lab: CodingSchema, windowDays: z.number() }).parse(params);
    return [meanWithin(await points(ctx.fhir, p.patient, p.lab, trace), nowOf(ctx), p.windowDays) ?? -1];
  },

  async 'lab-trend'(params, ctx, trace) {
    const p = z.object({ patient: z.string(), lab: CodingSchema, stableBelow: z.number() }).parse(params);
    return [trendOf(await points(ctx.fhir, p.patient, p.lab, trace), nowOf(ctx), p.stableBelow) ?? 'insufficient data'];
  },

  async 'record-vital'(params, ctx, trace) {
    const p = z.object({ patient: z.string(), vital: CodingSchema, value: z.number(), unit: z.string() }).parse(params);
    await create(
      ctx,
      trace,
      'record_observation',
      vitalWrite({ patient: p.patient, code: p.vital, value: p.value, unit: p.unit, now: ctx.scenario.context.now }).resource,
    );
    return [];
  },

  async 'replacement-order'(params, ctx, trace) {
    const p = z
      .object({
        patient: z.string(),
        lab: CodingSchema,
        windowDays: z.number(),
        rule: z.enum(['potassium', 'magnesium']),
        medication: CodingSchema,
      })
      .parse(params);
    const last = latestWithin(await points(ctx.fhir, p.patient, p.lab, trace), nowOf(ctx), p.windowDays);
    if (!last) return [-1];
    const now = ctx.scenario.context.now;
    if (p.rule === 'potassium') {
      const dose = potassiumDose(last.value);
      if (dose !== undefined) {
        await create(
          ctx,
          trace,
          'order_medication',
          medicationWrite({ patient: p.patient, medication: p.medication, dose: round(dose, 1), unit: 'mEq', route: 'oral', now }).resource,
        );
      }
    } else {
      const d = magnesiumDose(last.value);
      if (d) {
        const w = medicationWrite({
          patient: p.patient,
          medication: p.medication,
          dose: d.grams,
          unit: 'g',
          route: 'IV',
          rate: { value: d.hours, unit: 'h' },
          now,
        });
        await create(ctx, trace, 'order_medication', w.resource);
      }
    }
    return [last.value];
  },

  async referral(params, ctx, trace) {
    const p = z.object({ patient: z.string(), service: CodingSchema, note: z.string(), priority: z.string().optional() }).parse(params);
    await create(
      ctx,
      trace,
      'order_service',
      serviceWrite({ patient: p.patient, code: p.service, note: p.note, priority: p.priority, now: ctx.scenario.context.now }).resource,
    );
    return [];
  },

  async 'stale-lab-order'(params, ctx, trace) {
    const p = z.object({ patient: z.string(), lab: CodingSchema, maxAgeDays: z.number(), order: CodingSchema }).parse(params);
    const last = latestWithin(await points(ctx.fhir, p.patient, p.lab, trace), nowOf(ctx));
    if (!last || last.at < nowOf(ctx) - p.maxAgeDays * 86_400_000) {
      await create(
        ctx,
        trace,
        'order_service',
        serviceWrite({ patient: p.patient, code: p.order, now: ctx.scenario.context.now }).resource,
      );
    }
    return [last ? last.value : -1];
  },

  async 'active-medications'(params, ctx, trace) {
    const p = z.object({ patient: z.string(), system: z.string() }).parse(params);
    return activeMedicationCodes(ctx.fhir, p.patient, p.system, trace);
  },

  async 'active-problems'(params, ctx, trace) {
    const p = z.object({ patient: z.string(), system: z.string() }).parse(params);
    return activeProblemCodes(ctx.fhir, p.patient, p.system, trace);
  },

  /** Multi-hop: active problems with no active medication that names them as its reason. */
  async 'untreated-problems'(params, ctx, trace) {
    const p = z.object({ patient: z.string(), system: z.string() }).parse(params);
    const conditions = await activeConditions(ctx.fhir, p.patient, trace);
    const meds = await activeMedicationRequests(ctx.fhir, p.patient, trace);
    const treated = new Set(
      meds.flatMap((m) => [
        ...(m.reasonReference ?? []).map((r) => r.reference?.split('/').pop()),
        ...(m.reasonCode ?? []).flatMap((c) => c.coding?.map((x) => x.code) ?? []),
      ]),
    );
    return [
      ...new Set(
        conditions
          .filter((c) => !treated.has(c.id) && !c.code?.coding?.some((x) => treated.has(x.code)))
          .flatMap((c) => codesIn(c.code?.coding, p.system)),
      ),
    ].sort();
  },
};

function codesIn(codings: Array<{ system?: string; code?: string }> | undefined, system: string): string[] {
  return (codings ?? []).filter((c) => c.system === system && c.code).map((c) => c.code!);
}

async function activeMedicationRequests(fhir: FhirClient, patient: string, trace: TraceFn): Promise<MedicationRequest[]> {
  trace('search_medication_requests', { patient, status: 'active' });
  const { resources } = await fhir.searchResources<MedicationRequest>('MedicationRequest', { patient, status: 'active' });
  return resources.filter((m) => m.status === 'active');
}

async function activeConditions(fhir: FhirClient, patient: string, trace: TraceFn): Promise<Condition[]> {
  trace('search_conditions', { patient, 'clinical-status': 'active' });
  const { resources } = await fhir.searchResources<Condition>('Condition', { patient, 'clinical-status': 'active' });
  return resources.filter((c) => c.clinicalStatus?.coding?.some((x) => x.code === 'active'));
}

async function activeMedicationCodes(fhir: FhirClient, patient: string, system: string, trace: TraceFn): Promise<string[]> {
  const meds = await activeMedicationRequests(fhir, patient, trace);
  return [...new Set(meds.flatMap((m) => codesIn(m.medicationCodeableConcept?.coding, system)))].sort();
}

async function activeProblemCodes(fhir: FhirClient, patient: string, system: string, trace: TraceFn): Promise<string[]> {
  return [...new Set((await activeConditions(fhir, patient, trace)).flatMap((c) => codesIn(c.code?.coding, system)))].sort();
}
