// Scorers on right, wrong and malformed answers: malformed input must fail cleanly, never throw.
import { describe, expect, it } from 'vitest';
import type { Resource } from '@medplum/fhirtypes';
import { parseAnswerText, parseFinishArguments } from '../parse-answer.ts';
import { selectPath } from '../json-path.ts';
import { scoreExact } from './score-exact.ts';
import { scoreNumeric } from './score-numeric.ts';
import { scoreSet } from './score-set.ts';
import { scoreRegex } from './score-regex.ts';
import { scoreJsonPath } from './score-json-path.ts';
import { scoreFhirActions } from './score-fhir-actions.ts';
import { scoreTrajectory } from './score-trajectory.ts';
import { modelGradedScorer } from './model-graded-scorer.ts';
import { ScenarioSchema } from '../scenario.ts';
import type { SolverOutput } from '../task.ts';

const MALFORMED: Array<unknown[] | null> = [null, [], [null], [{}], [[1, 2]], ['a', 'b'], [Number.NaN]];

describe('answer parsing', () => {
  it('reads finish-tool arguments, FINISH([...]) text and bare JSON lists', () => {
    expect(parseFinishArguments('{"answer":["S1"]}').answer).toEqual(['S1']);
    expect(parseFinishArguments('[42]').answer).toEqual([42]);
    expect(parseAnswerText('Done. FINISH(["Patient not found"])').answer).toEqual(['Patient not found']);
    expect(parseAnswerText('first FINISH([1]) then FINISH([2.5, "2023-11-13T10:15:00+00:00"])').answer).toEqual([
      2.5,
      '2023-11-13T10:15:00+00:00',
    ]);
    expect(parseAnswerText('```json\n[7]\n```').answer).toEqual([7]);
  });
  it('treats malformed answers as no answer', () => {
    for (const bad of ['{"answer": 3}', 'not json', '{"answer":[1', '']) expect(parseFinishArguments(bad).answer).toBeNull();
    for (const bad of ['FINISH(oops)', 'FINISH([1, 2', 'the answer is 4', null, 'FINISH(["a]"])x']) {
      expect(() => parseAnswerText(bad)).not.toThrow();
    }
    expect(parseAnswerText('FINISH(oops)').answer).toBeNull();
    expect(parseAnswerText('FINISH(["a]"])').answer).toEqual(['a]']);
  });
});

describe('answer scorers', () => {
  it('exact', () => {
    expect(scoreExact(['S6534835'], { value: 'S6534835' }).value).toBe(1);
    expect(scoreExact([' patient NOT found '], { value: 'Patient not found' }).value).toBe(1);
    expect(scoreExact([42], { value: 42 }).value).toBe(1);
    expect(scoreExact(['42'], { value: 42 }).value).toBe(1);
    expect(scoreExact(['S0000000'], { value: 'S6534835' }).value).toBe(0);
    for (const m of MALFORMED) expect(scoreExact(m, { value: 'x' }).value).toBe(0);
  });
  it('numeric with tolerance', () => {
    expect(scoreNumeric([101.05], { value: 101, tolerance: 0.1 }).value).toBe(1);
    expect(scoreNumeric(['3.4'], { value: 3.4 }).value).toBe(1);
    const wrong = scoreNumeric([102], { value: 101, tolerance: 0.1 });
    expect(wrong.value).toBe(0);
    expect(wrong.explanation).toMatch(/off by/);
    for (const m of MALFORMED) expect(scoreNumeric(m, { value: 1, tolerance: 0.1 }).value).toBe(0);
  });
  it('list and set', () => {
    expect(scoreSet(['b', 'A'], { values: ['a', 'b'] }).value).toBe(1);
    expect(scoreSet(['b', 'a'], { values: ['a', 'b'], ordered: true }).value).toBe(0);
    const wrong = scoreSet(['a', 'c'], { values: ['a', 'b'] });
    expect(wrong.value).toBe(0);
    expect(wrong.metadata).toEqual({ missing: ['b'], extra: ['c'] });
    expect(scoreSet(null, { values: [] }).value).toBe(0);
    expect(scoreSet([{}], { values: ['a'] }).value).toBe(0);
  });
  it('regex', () => {
    expect(scoreRegex(['rising'], { pattern: '^(rising|increasing)$' }).value).toBe(1);
    expect(scoreRegex(['falling'], { pattern: '^rising$' }).value).toBe(0);
    expect(scoreRegex(['x'], { pattern: '(' }).explanation).toMatch(/invalid pattern/);
    for (const m of MALFORMED) expect(scoreRegex(m, { pattern: '^rising$' }).value).toBe(0);
  });
  it('JSON path', () => {
    expect(selectPath({ a: [{ b: 1 }, { b: 2 }] }, 'a.b')).toEqual([1, 2]);
    expect(selectPath({ a: [{ b: 1 }] }, '$.a[0].b')).toEqual([1]);
    expect(selectPath({ code: { text: 'BP' } }, 'code.coding.code|code.text')).toEqual(['BP']);
    expect(selectPath({}, 'a[')).toEqual([]);
    expect(scoreJsonPath([{ value: 7.2, unit: '%' }], { path: '$[0].value', matcher: { approx: 7.2, tolerance: 0.05 } }).value).toBe(1);
    expect(scoreJsonPath([{ value: 9 }], { path: '$[0].value', matcher: 7 }).value).toBe(0);
    for (const m of MALFORMED) expect(scoreJsonPath(m, { path: '$[0].value', matcher: 1 }).value).toBe(0);
  });
});

const observation = (over: Partial<Record<string, unknown>> = {}): Resource =>
  ({
    resourceType: 'Observation',
    id: 'o1',
    status: 'final',
    code: { coding: [{ system: 'http://loinc.org', code: '8867-4' }] },
    subject: { reference: 'Patient/S1' },
    valueQuantity: { value: 72, unit: '/min' },
    effectiveDateTime: '2025-06-15T10:00:00Z',
    ...over,
  }) as Resource;

describe('FHIR action scorer', () => {
  const expected = [
    {
      resourceType: 'Observation',
      fields: {
        'code.coding.code': '8867-4',
        'valueQuantity.value': { approx: 72, tolerance: 0 },
        'subject.reference': 'Patient/S1',
        effectiveDateTime: { instant: '2025-06-15T10:00:00.000+00:00' },
      },
    },
  ];
  it('accepts exactly the expected writes', () => {
    expect(scoreFhirActions([observation()], expected).value).toBe(1);
  });
  it('names the wrong field', () => {
    const s = scoreFhirActions([observation({ valueQuantity: { value: 80 } })], expected);
    expect(s.value).toBe(0);
    expect(s.explanation).toMatch(/valueQuantity\.value/);
  });
  it('fails on extra, missing or unexpected writes', () => {
    expect(scoreFhirActions([observation(), observation({ id: 'o2' })], expected).value).toBe(0);
    expect(scoreFhirActions([], expected).value).toBe(0);
    expect(scoreFhirActions([observation()], []).value).toBe(0);
    expect(scoreFhirActions([], []).value).toBe(1);
  });
  it('survives malformed resources', () => {
    const junk = [
      { resourceType: 'Observation' },
      { resourceType: 'Observation', code: 'x', valueQuantity: null },
    ] as unknown as Resource[];
    expect(() => scoreFhirActions(junk, [...expected, ...expected])).not.toThrow();
    expect(scoreFhirActions(junk, [...expected, ...expected]).value).toBe(0);
  });
});

describe('trajectory scorer', () => {
  const out = (tools: string[], steps: number): SolverOutput => ({
    answer: [],
    rawAnswer: null,
    transcript: [],
    toolTrace: tools.map((name) => ({ name, arguments: '{}', ok: true, via: 'client' as const })),
    modelCalls: Array.from({ length: steps }, () => ({
      finishReason: 'tool_calls' as const,
      promptTokens: 0,
      completionTokens: 0,
      reasoningTokens: 0,
      cachedTokens: 0,
      latencyMs: 0,
    })),
  });
  it('checks required and forbidden tools and the step budget', () => {
    const spec = { requiredTools: ['search_observations'], forbiddenTools: ['order_medication'], maxSteps: 3 };
    expect(scoreTrajectory(out(['search_observations'], 2), spec).value).toBe(1);
    expect(scoreTrajectory(out([], 2), spec).explanation).toMatch(/required tool/);
    expect(scoreTrajectory(out(['search_observations', 'order_medication'], 2), spec).explanation).toMatch(/forbidden/);
    expect(scoreTrajectory(out(['search_observations'], 5), spec).explanation).toMatch(/5 steps > 3/);
  });
});

describe('model-graded scorer', () => {
  const scenario = ScenarioSchema.parse({
    id: 'mg1',
    category: 'c',
    instruction: 'Summarise',
    context: { now: '2025-06-15T10:00:00Z' },
    expected: { kind: 'model-graded', rubric: 'mentions potassium' },
    expectsWrites: false,
  });
  const ctx = (answer: unknown[] | null) => ({
    scenario,
    writes: [],
    fhir: undefined as never,
    now: new Date(),
    clockPinned: true,
    output: { answer, rawAnswer: null, transcript: [], toolTrace: [], modelCalls: [] },
  });
  const judge = (content: string, status = 200): typeof fetch =>
    (async () => new Response(JSON.stringify({ choices: [{ message: { content } }] }), { status })) as typeof fetch;
  it('passes on GRADE: C, fails on GRADE: I, and fails cleanly when the judge misbehaves', async () => {
    expect(
      (await modelGradedScorer({ baseUrl: 'http://judge/v1', model: 'j', fetch: judge('ok\nGRADE: C') }).score(ctx(['K is 3.1'])))!.value,
    ).toBe(1);
    expect((await modelGradedScorer({ baseUrl: 'http://judge/v1', model: 'j', fetch: judge('GRADE: I') }).score(ctx(['x'])))!.value).toBe(
      0,
    );
    expect(
      (await modelGradedScorer({ baseUrl: 'http://judge/v1', model: 'j', fetch: judge('no idea') }).score(ctx(null)))!.explanation,
    ).toMatch(/no grade/);
    expect(
      (await modelGradedScorer({ baseUrl: 'http://judge/v1', model: 'j', fetch: judge('', 500) }).score(ctx(null)))!.explanation,
    ).toMatch(/HTTP 500/);
    const boom = (async () => {
      throw new Error('refused');
    }) as typeof fetch;
    expect((await modelGradedScorer({ baseUrl: 'http://judge/v1', model: 'j', fetch: boom }).score(ctx(null)))!.explanation).toMatch(
      /refused/,
    );
  });
});
