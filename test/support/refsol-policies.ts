// Transcripts in AgentBench's shape (what refsol.py reads) made by several policies over a MedAgentBench task:
// the correct one (built from the strict expectation, written as refsol wants it), doing nothing, and the
// mistakes models make. Used to check the TypeScript `refsol` grader against the real refsol.py verdict by verdict.
import type { Resource } from '@medplum/fhirtypes';
import type { MabExpectation } from '../../evals/medagentbench/expectation.ts';
import type { RefsolRun } from '../../evals/medagentbench/refsol-grader.ts';
import type { RefsolMessage } from '../../evals/medagentbench/refsol-transcript.ts';

const ACCEPTED = 'POST request accepted (test policy); call FINISH when done';
const REFUSED = 'Invalid POST request';

type Payload = Record<string, unknown>;

/** The strict expectation's resource as refsol wants the POST body: route a bare string, note one object. */
function refsolBody(resource: Resource): Payload {
  const r = structuredClone(resource) as unknown as Payload & {
    dosageInstruction?: Array<{ route?: { text?: string } | string }>;
    note?: Array<{ text: string }> | { text: string };
  };
  for (const d of r.dosageInstruction ?? []) if (d.route && typeof d.route === 'object') d.route = d.route.text;
  if (Array.isArray(r.note)) r.note = r.note[0];
  return r;
}

function expectedAnswer(exp: MabExpectation): unknown[] {
  const a = exp.answer;
  if (a.kind === 'any') return [];
  if (a.kind === 'tolerance') return [a.value];
  return a.value;
}

interface Draft {
  posts: Array<{ url: string; body: Payload | string; reply?: string }>;
  result: string | null;
}

function toRun(d: Draft, opts: { lastPostUnanswered?: boolean } = {}): RefsolRun {
  const history: RefsolMessage[] = [{ role: 'user', content: 'task prompt (test policy)' }];
  d.posts.forEach((p, i) => {
    history.push({
      role: 'agent',
      content: `POST ${p.url}\n${typeof p.body === 'string' ? p.body : JSON.stringify(p.body).replaceAll('"__NaN__"', 'NaN')}`,
    });
    if (!(opts.lastPostUnanswered && i === d.posts.length - 1)) history.push({ role: 'user', content: p.reply ?? ACCEPTED });
  });
  if (d.result !== null) history.push({ role: 'agent', content: `FINISH(${d.result})` });
  return { history, result: d.result };
}

const mapTimes = (v: unknown, f: (s: string) => string): unknown =>
  typeof v === 'string'
    ? f(v)
    : Array.isArray(v)
      ? v.map((x) => mapTimes(x, f))
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mapTimes(x, f)]))
        : v;
const zulu = (s: string) => s.replace(/^(\d{4}-\d{2}-\d{2}T[\d:.]+)\+00:00$/, '$1Z');

export const POLICIES = [
  'correct',
  'do-nothing',
  'no-finish',
  'empty-answer',
  'numbers-as-strings',
  'route-object',
  'z-timestamps',
  'note-as-list',
  'extra-post',
  'missing-post',
  'finish-not-json',
  'refused-post',
  'post-unanswered',
  'post-in-finish',
  'other-base-spelling',
  'python-only-json',
] as const;
export type Policy = (typeof POLICIES)[number];

/** The run a policy makes on a task whose strict expectation is `exp`, against the FHIR base `base`. */
export function policyRun(policy: Policy, exp: MabExpectation, base: string): RefsolRun {
  const answer = expectedAnswer(exp);
  const posts = exp.writes.map((w) => ({ url: `${base}${w.resource.resourceType}`, body: refsolBody(w.resource) }));
  const correct: Draft = { posts, result: JSON.stringify(answer) };
  const edit = (f: (p: Payload) => void): Draft => ({
    ...correct,
    posts: posts.map((p) => {
      const body = structuredClone(p.body) as Payload;
      f(body);
      return { ...p, body };
    }),
  });
  switch (policy) {
    case 'correct':
      return toRun(correct);
    case 'do-nothing':
      return toRun({ posts: [], result: '[]' });
    case 'no-finish':
      return toRun({ posts, result: null });
    case 'empty-answer':
      return toRun({ posts, result: '[]' });
    case 'numbers-as-strings':
      return toRun({ posts, result: JSON.stringify(answer.map((x) => (typeof x === 'number' ? String(x) : x))) });
    case 'route-object':
      return toRun(
        edit((b) => {
          for (const d of (b.dosageInstruction as Array<Payload> | undefined) ?? []) d.route = { text: d.route };
        }),
      );
    case 'z-timestamps':
      return toRun({ ...edit((b) => Object.assign(b, mapTimes(b, zulu))), result: JSON.stringify(mapTimes(answer, zulu)) });
    case 'note-as-list':
      return toRun(edit((b) => b.note && (b.note = [b.note])));
    case 'extra-post': {
      const extra = { url: `${base}Observation`, body: { resourceType: 'Observation', status: 'final', code: { text: 'note' } } };
      return toRun({ ...correct, posts: [...posts, ...(posts.length ? [posts[0]] : [extra])] });
    }
    case 'missing-post':
      return toRun({ ...correct, posts: posts.slice(0, -1) });
    case 'finish-not-json':
      return toRun({ posts, result: `[(${answer.map((x) => String(x)).join(', ')})]` });
    case 'refused-post':
      return toRun({
        ...correct,
        posts: posts.length
          ? posts.map((p, i) => (i === 0 ? { ...p, reply: REFUSED } : p))
          : [{ url: `${base}Observation`, body: '{not json', reply: REFUSED }],
      });
    case 'post-unanswered':
      return toRun(
        { posts: posts.length ? posts : [{ url: `${base}Observation`, body: '{}' }], result: correct.result },
        { lastPostUnanswered: true },
      );
    case 'post-in-finish':
      return toRun({ posts, result: JSON.stringify([...answer, 'POST']) });
    case 'other-base-spelling':
      return toRun({ ...correct, posts: posts.map((p) => ({ ...p, url: p.url.replace('127.0.0.1', 'localhost') })) });
    case 'python-only-json':
      return toRun(edit((b) => (b.extension = [{ url: 'urn:x', valueDecimal: '__NaN__' }])));
  }
}
