// Look-alike FHIR-AgentBench questions computed from any MIMIC-shaped resources (fixtures/mimic's generator in the
// tests), written as the published CSV is: same columns, RFC 4180 quoting, Python-repr answers and gold ids, numpy
// 2-D arrays for multi-row numeric answers, assumptions with a naive "current time". Nothing here is the benchmark's.
import { createHash } from 'node:crypto';
import type { Encounter, Medication, MedicationRequest, Observation, Patient, Resource } from '@medplum/fhirtypes';

export const AGENTBENCH_COLUMNS = [
  'split',
  'question_id',
  'question',
  'sql_query',
  'true_answer',
  'assumption',
  'patient_fhir_id',
  'template',
  'val_dict',
  'proc_query',
  'main_table_name',
  'mappable_to_fhir',
  'true_fhir_ids',
] as const;

export type GeneratedRow = Record<(typeof AGENTBENCH_COLUMNS)[number], string>;

const CASE_NOTE = 'When searching for values in the database, account for all variations in letter case and surrounding whitespace.';

/** `YYYY-MM-DD HH:MM:SS` as written in the record (its local wall-clock time). */
const naive = (dt: string) => dt.slice(0, 19).replace('T', ' ');
const patientOf = (r: { subject?: { reference?: string } }) => r.subject?.reference?.replace(/^Patient\//, '');
/** MIMIC's drug-name code system: a Medication's name identifier, a provider order's name coding. */
const isNameSystem = (system: string | undefined) => /\/mimic-medication-name$/.test(system ?? '');

/**
 * The drug an order names, as MIMIC keeps it (a catalogue Medication's name identifier, or a provider order's name
 * coding), with the Medication it references; undefined for mixes and IV-order kinds, which name no single drug.
 */
function orderedDrug(
  order: MedicationRequest,
  medications: ReadonlyMap<string, Medication>,
): { name: string; medication?: string } | undefined {
  const ref = order.medicationReference?.reference?.replace(/^Medication\//, '');
  if (ref) {
    const name = medications.get(ref)?.identifier?.find((i) => isNameSystem(i.system))?.value;
    return name ? { name, medication: ref } : undefined;
  }
  const name = order.medicationCodeableConcept?.coding?.find((c) => isNameSystem(c.system))?.code;
  return name ? { name } : undefined;
}

const display = (o: Observation) => o.code?.text ?? o.code?.coding?.find((c) => c.display)?.display ?? o.code?.coding?.[0]?.code ?? '';

export function generateAgentBenchRows(resources: readonly Resource[]): GeneratedRow[] {
  const patients = resources.filter((r): r is Patient => r.resourceType === 'Patient').sort((a, b) => a.id!.localeCompare(b.id!));
  const encounters = resources.filter(
    (r): r is Encounter => r.resourceType === 'Encounter' && (r.meta?.profile?.some((p) => p.endsWith('/mimic-encounter')) ?? true),
  );
  const observations = resources.filter((r): r is Observation => r.resourceType === 'Observation' && !!r.effectiveDateTime);
  const labs = observations.filter((o) => o.category?.some((c) => c.coding?.some((x) => x.code === 'laboratory')));
  const numeric = observations.filter((o) => typeof o.valueQuantity?.value === 'number');
  const medications = new Map(resources.filter((r): r is Medication => r.resourceType === 'Medication').map((m) => [m.id!, m]));
  const orders = resources.filter((r): r is MedicationRequest => r.resourceType === 'MedicationRequest' && !!r.authoredOn);
  const rows: GeneratedRow[] = [];
  for (const p of patients) {
    const sid = p.identifier?.[0]?.value ?? p.id!;
    const mine = <T extends { subject?: { reference?: string } }>(list: T[]) => list.filter((r) => patientOf(r) === p.id);
    const add = (q: Omit<GeneratedRow, 'split' | 'question_id' | 'patient_fhir_id' | 'sql_query' | 'proc_query' | 'mappable_to_fhir'>) =>
      rows.push({
        split: 'test',
        question_id: createHash('sha256').update(`${p.id}|${q.question}`).digest('hex').slice(0, 24),
        sql_query: '',
        proc_query: '',
        mappable_to_fhir: 'True',
        patient_fhir_id: p.id!,
        ...q,
      });
    const val = (extra: Record<string, unknown> = {}) =>
      pyRepr({ val_placeholder: { patient_id: Number(sid) || sid, ...extra }, op_placeholder: {}, time_placeholder: {} });

    add({
      question: `What is the gender of patient ${sid}?`,
      true_answer: pyRepr([[p.gender ?? null]]),
      assumption: '',
      template: 'What is the gender of patient {patient_id}?',
      val_dict: val(),
      main_table_name: 'patients',
      true_fhir_ids: pyRepr({ Patient: [p.id!] }),
    });

    const stays = mine(encounters).filter((e) => e.period?.start);
    const year = stays.map((e) => e.period!.start!.slice(0, 4)).sort()[0];
    if (year) {
      const inYear = stays.filter((e) => e.period!.start!.startsWith(year));
      add({
        question: `How many times did patient ${sid} visit the hospital in ${year}?`,
        true_answer: pyRepr([[inYear.length]]),
        assumption: `Assume the current time is ${year}-12-31 23:59:00.`,
        template: 'Count the number of hospital visits of patient {patient_id} [time_filter_global1].',
        val_dict: val(),
        main_table_name: 'admissions',
        true_fhir_ids: pyRepr({ Encounter: inYear.map((e) => e.id!) }),
      });
    }

    const myLabs = mine(labs);
    if (myLabs.length) {
      const month = myLabs.map((o) => o.effectiveDateTime!.slice(0, 7)).sort()[0];
      const [y, m] = month.split('-');
      add({
        question: `Did patient ${sid} receive any lab testing in ${m}/${y}?`,
        true_answer: '[[1]]',
        assumption: `Assume the current time is ${y}-12-31 23:59:00.`,
        template: 'Has_verb patient {patient_id} received any lab test [time_filter_global1]?',
        val_dict: val(),
        main_table_name: 'labevents',
        true_fhir_ids: pyRepr({ Observation: myLabs.filter((o) => o.effectiveDateTime!.startsWith(month)).map((o) => o.id!) }),
      });
      const empty = `${Number(y) - 1}`;
      add({
        question: `Did patient ${sid} receive any lab testing in 01/${empty}?`,
        true_answer: '[[0]]',
        assumption: `Assume the current time is ${empty}-12-31 23:59:00.`,
        template: 'Has_verb patient {patient_id} received any lab test [time_filter_global1]?',
        val_dict: val(),
        main_table_name: 'labevents',
        true_fhir_ids: '{}',
      });
    }

    // The patient's most measured numeric item: max, first time, monthly averages, and a two-column row.
    const byCode = new Map<string, Observation[]>();
    for (const o of mine(numeric)) byCode.set(display(o), [...(byCode.get(display(o)) ?? []), o]);
    const [name, series] = [...byCode].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))[0] ?? [];
    if (name && series) {
      const sorted = [...series].sort((a, b) => a.effectiveDateTime!.localeCompare(b.effectiveDateTime!));
      const lastYear = sorted[sorted.length - 1].effectiveDateTime!.slice(0, 4);
      const values = sorted.map((o) => o.valueQuantity!.value!);
      const ids = { Observation: sorted.map((o) => o.id!) };
      const assumption = `Assume the current time is ${lastYear}-12-31 23:59:00. Search for '${name}' to find ${name.toLowerCase()}.`;
      add({
        question: `What was the maximum ${name.toLowerCase()} value of patient ${sid}?`,
        true_answer: pyRepr([[Math.max(...values)]]),
        assumption,
        template: 'What was the [agg_function] {lab_name} value of patient {patient_id} [time_filter_global1]?',
        val_dict: val({ lab_name: name.toLowerCase() }),
        main_table_name: 'chartevents',
        true_fhir_ids: pyRepr(ids),
      });
      add({
        question: `When was the first time that patient ${sid} had a ${name.toLowerCase()} measurement?`,
        true_answer: pyRepr([[naive(sorted[0].effectiveDateTime!)]]),
        assumption: `${assumption} ${CASE_NOTE}`,
        template: 'When was the [time_filter_exact1] time that patient {patient_id} had a {lab_name} measurement?',
        val_dict: val({ lab_name: name.toLowerCase() }),
        main_table_name: 'chartevents',
        true_fhir_ids: pyRepr({ Observation: [sorted[0].id!] }),
      });
      const months = new Map<string, number[]>();
      for (const o of sorted)
        months.set(o.effectiveDateTime!.slice(0, 7), [...(months.get(o.effectiveDateTime!.slice(0, 7)) ?? []), o.valueQuantity!.value!]);
      const averages = [...months.values()].map((v) => Math.round((v.reduce((a, b) => a + b, 0) / v.length) * 10) / 10);
      add({
        question: `Could you retrieve patient ${sid}'s monthly ${name.toLowerCase()}? if multiple values are measured monthly, take the average.`,
        true_answer: numpyColumn(averages),
        assumption,
        template: 'List the [unit_average] [agg_function] {lab_name} of patient {patient_id} [time_filter_global1].',
        val_dict: val({ lab_name: name.toLowerCase() }),
        main_table_name: 'chartevents',
        true_fhir_ids: pyRepr(ids),
      });
      const last = sorted[sorted.length - 1];
      add({
        question: `What were the value and the time of patient ${sid}'s last ${name.toLowerCase()}, "as charted"?`,
        true_answer: pyRepr([[last.valueQuantity!.value!, naive(last.effectiveDateTime!)]]),
        assumption,
        template: 'What was the value and time of the last {lab_name} of patient {patient_id}?',
        val_dict: val({ lab_name: name.toLowerCase() }),
        main_table_name: 'chartevents',
        true_fhir_ids: pyRepr({ Observation: [last.id!] }),
      });
    }

    // Prescriptions: the first drug ordered, and how many times the most ordered drug was, by the name MIMIC keeps.
    const named = mine(orders)
      .map((order) => ({ order, drug: orderedDrug(order, medications) }))
      .filter((o): o is { order: MedicationRequest; drug: NonNullable<ReturnType<typeof orderedDrug>> } => !!o.drug)
      .sort((a, b) => a.order.authoredOn!.localeCompare(b.order.authoredOn!) || a.order.id!.localeCompare(b.order.id!));
    if (named.length) {
      const lastYear = named[named.length - 1].order.authoredOn!.slice(0, 4);
      const assumption = `Assume the current time is ${lastYear}-12-31 23:59:00. ${CASE_NOTE}`;
      const goldOf = (list: typeof named) => {
        const meds = [...new Set(list.map((o) => o.drug.medication).filter((m): m is string => !!m))];
        return pyRepr({ MedicationRequest: list.map((o) => o.order.id!), ...(meds.length ? { Medication: meds } : {}) });
      };
      const [first] = named;
      // Orders written at the same time as the first, naming another drug, make "the first" ambiguous: not asked.
      if (
        !named.some((o) => o.order.authoredOn === first.order.authoredOn && o.drug.name.toLowerCase() !== first.drug.name.toLowerCase())
      ) {
        add({
          question: `What was the name of the drug that patient ${sid} was first prescribed?`,
          true_answer: pyRepr([[first.drug.name]]),
          assumption,
          template: 'What was the name of the drug that patient {patient_id} was [time_filter_exact1] prescribed [time_filter_global1]?',
          val_dict: val(),
          main_table_name: 'prescriptions',
          true_fhir_ids: goldOf([first]),
        });
      }
      const byDrug = new Map<string, typeof named>();
      for (const o of named) {
        const key = o.drug.name.trim().toLowerCase();
        const list = byDrug.get(key) ?? [];
        list.push(o);
        byDrug.set(key, list);
      }
      const [drug, prescribed] = [...byDrug].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))[0]!;
      add({
        question: `How many times did patient ${sid} get prescribed ${drug}?`,
        true_answer: pyRepr([[prescribed.length]]),
        assumption,
        template: 'Count the number of times that patient {patient_id} was prescribed {drug_name} [time_filter_global1].',
        val_dict: val({ drug_name: drug }),
        main_table_name: 'prescriptions',
        true_fhir_ids: goldOf(prescribed),
      });
    }

    add({
      question: `Calculate the total volume of drainage bag for patient ${sid} on this month/17.`,
      true_answer: '[[None]]',
      assumption: `Assume the current time is 2116-12-31 23:59:00. ${CASE_NOTE} I want the final output to be the sum of the retrieved results.`,
      template: 'What was the total volume of {output_name} output that patient {patient_id} had [time_filter_global1]?',
      val_dict: val({ output_name: 'drainage bag' }),
      main_table_name: 'outputevents',
      true_fhir_ids: '{}',
    });
  }
  return rows;
}

/** Python's repr of JSON-like data (the subset the benchmark's files use). */
function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(v);
  if (typeof v === 'string') {
    const quote = v.includes("'") && !v.includes('"') ? '"' : "'";
    const body = v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(new RegExp(quote, 'g'), `\\${quote}`);
    return `${quote}${body}${quote}`;
  }
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`)
    .join(', ')}}`;
}

/** A numpy column of floats as `str(ndarray)` prints it: `[[115.8]\n [117.7]]`, `[[201.]]`. */
function numpyColumn(values: readonly number[]): string {
  const cell = (x: number) => (Number.isInteger(x) ? `${x}.` : String(x));
  return `[${values.map((x, i) => `${i ? ' ' : ''}[${cell(x)}]`).join('\n')}]`;
}

export function toCsv(rows: readonly GeneratedRow[]): string {
  const field = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  return [AGENTBENCH_COLUMNS.join(','), ...rows.map((r) => AGENTBENCH_COLUMNS.map((c) => field(r[c])).join(','))].join('\n') + '\n';
}
