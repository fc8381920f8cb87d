// What the MedAgentBench task texts say, parsed. Fallbacks are the values the original grader hard-codes.

/** The benchmark's fixed clock, used when a task's context names none (category 1). */
export const DEFAULT_NOW = '2023-11-13T10:15:00+00:00';
export const ACTION_CATEGORIES = new Set(['task3', 'task5', 'task8', 'task9', 'task10']);

export const MAB = {
  bpFlowsheet: 'BP',
  bpValue: '118/77 mmHg',
  magnesiumNdc: '0338-1715-40',
  potassiumNdc: '40032-917-01',
  potassiumLoinc: '2823-3',
  a1cLoinc: '4548-4',
  referralSnomed: '306181000000106',
  referralNote:
    'Situation: acute left knee injury, Background: radiology report indicates ACL tear. Assessment: ACL tear grade II. Recommendation: request for Orthopedic service to evaluate and provide management recommendations.',
  labSystem: 'urn:fhir-agent-gateway:medagentbench:lab-code',
  vitalCategorySystem: 'http://hl7.org/fhir/observation-category',
  ndcSystem: 'http://hl7.org/fhir/sid/ndc',
  loincSystem: 'http://loinc.org',
  snomedSystem: 'http://snomed.info/sct',
} as const;

export function parseNow(context: string): string | undefined {
  const m = /It'?s (\d{4}-\d{2}-\d{2}T[\d:.]+(?:Z|[+-]\d{2}:\d{2})) now/i.exec(context);
  return m?.[1];
}

export function parseNameAndDob(instruction: string): { given: string; family: string; birthDate: string } | undefined {
  const m = /name\s+(.+?)\s+and\s+DOB\s+of\s+(\d{4}-\d{2}-\d{2})/i.exec(instruction);
  if (!m) return undefined;
  const parts = m[1].trim().split(/\s+/);
  return { given: parts.slice(0, -1).join(' ') || parts[0], family: parts[parts.length - 1], birthDate: m[2] };
}

function parseQuoted(text: string, after: RegExp): string | undefined {
  const m = new RegExp(after.source + String.raw`\s*[“"]([^”"]+)[”"]`, 'i').exec(text);
  return m?.[1];
}

export function parseBpValue(instruction: string): string {
  return parseQuoted(instruction, /it is/) ?? MAB.bpValue;
}

export function parseReferralNote(instruction: string): string {
  return parseQuoted(instruction, /free text of the referral,/) ?? MAB.referralNote;
}

export function parseCode(context: string, label: RegExp, fallback: string): string {
  const m = new RegExp(label.source + String.raw`[^"\d]*"?([\d-]+)"?`, 'i').exec(context);
  return m?.[1] ?? fallback;
}

/** YYYY-MM-DD of the day after `now`, in now's own UTC offset (the original checks the string `…T08:`). */
export function nextDayDate(now: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(now);
  if (!m) return '';
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + 1));
  return d.toISOString().slice(0, 10);
}
