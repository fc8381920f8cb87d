// FHIR-AgentBench's file format: the CSV as published (quotes, commas, newlines inside cells), its Python-literal
// cells (None/True, nested lists, numpy's comma-less arrays, unicode), the current-time mapping and the scenarios.
import { describe, expect, it } from 'vitest';
import { agentBenchToScenario, NO_ASSUMPTION_NOW } from './agentbench-scenario.ts';
import { answerKind } from './answer-kind.ts';
import { bostonDateTime } from './boston-time.ts';
import { AGENTBENCH_COLUMNS } from './generate-agentbench-csv.ts';
import { parsePythonLiteral, PythonLiteralError } from './python-literal.ts';
import { AgentBenchCsvError, isAgentBenchCsv, readAgentBenchCsv } from './read-agentbench-csv.ts';
import { userPrompt } from '../solvers/agent-prompt.ts';

const HEADER = AGENTBENCH_COLUMNS.join(',');

describe('Python literals', () => {
  it.each([
    ['[[1]]', [[1]]],
    ['[]', []],
    ['[[None]]', [[null]]],
    ['[[True, False]]', [[true, false]]],
    ["[['STAPH AUREUS COAG +']]", [['STAPH AUREUS COAG +']]],
    ['[[115.8]\n [117.7]]', [[115.8], [117.7]]],
    ['[[201.]]', [[201]]],
    ['[[-38]]', [[-38]]],
    ['[[1.5e-3]]', [[0.0015]]],
    ["[['2133-12-31 02:00:00']]", [['2133-12-31 02:00:00']]],
    [
      "[['a' 'b']\n ['c' 'd']]",
      [
        ['a', 'b'],
        ['c', 'd'],
      ],
    ],
    ['[["it\'s", \'say "hi"\']]', [["it's", 'say "hi"']]],
    ["[['caf\\xe9 \\u00e9\\n']]", [['café é\n']]],
    ["[['naïve – ünïcode']]", [['naïve – ünïcode']]],
    ['[(1, 2), (3,)]', [[1, 2], [3]]],
    ["{'Observation': ['a-1', 'b-2'], 'Encounter': []}", { Observation: ['a-1', 'b-2'], Encounter: [] }],
    ['[[nan]]', [[null]]],
  ])('%s', (text, value) => {
    expect(parsePythonLiteral(text)).toEqual(value);
  });

  it.each([['[[1]'], ["[['open]]"], ['[[os.system("x")]]'], ['[[1]] extra'], ['__import__("os")'], ['[1 +]']])('rejects %s', (text) => {
    expect(() => parsePythonLiteral(text)).toThrow(PythonLiteralError);
  });
});

const row = (cells: Partial<Record<(typeof AGENTBENCH_COLUMNS)[number], string>>) =>
  AGENTBENCH_COLUMNS.map((c) => {
    const v = cells[c] ?? '';
    return /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
  }).join(',');

describe('the CSV as published', () => {
  const tricky = [
    HEADER,
    row({
      question_id: 'q1',
      question:
        "Could you retrieve patient 10005909's monthly weight since 09/2144? if multiple weights are measured monthly, take the average.",
      true_answer: '[[115.8]\n [117.7]]',
      assumption: "Assume the current time is 2144-12-31 23:59:00. Search for 'Daily Weight' to find weight.",
      patient_fhir_id: '158f3a39-e3d7-5e7a-93aa-57af894aadd9',
      val_dict: `{'val_placeholder': {'patient_id': 10005909}, 'time_placeholder': {'t': {'sql': "AND strftime('%Y-%m',x) >= '2144-09'"}}}`,
      sql_query: "SELECT AVG(v) FROM t WHERE label = 'Daily Weight' GROUP BY strftime('%Y-%m',charttime)",
      mappable_to_fhir: 'True',
      true_fhir_ids: "{'Observation': ['29ea6ee8-f1ac-58d6-81c6-64c6035f07f6', '8a616f4f-e689-57f8-a1d8-10613125d531']}",
    }),
    row({
      question_id: 'q2',
      question: 'Did patient 10002428 come to the er during the first hospital encounter?',
      true_answer: '[[1]]',
      patient_fhir_id: 'e1de99bc-3bc5-565e-9ee6-69675b9cc267',
      true_fhir_ids: "{'Encounter': ['493f1402-9b10-53db-9d78-7a5f25b710b8']}",
    }),
    row({
      question_id: 'q3',
      question: 'Calculate the total volume of drainage bag for patient 10021487 on this month/17.',
      true_answer: '[[None]]',
      assumption:
        'Assume the current time is 2116-07-31 23:59:00. When searching for values in the database, account for all variations in letter case and surrounding whitespace.',
      patient_fhir_id: '4365e125-c049-525a-9459-16d5e6947ad2',
      true_fhir_ids: '{}',
    }),
    row({
      question_id: 'q4',
      question: 'What was the name of the organism found in the "first" pleural fluid test — ünïcode, commas, too?',
      true_answer: "[['STAPH AUREUS COAG +', \"O'BRIEN\"]]",
      patient_fhir_id: 'f3fc719c-f6e0-5c27-a18f-b4e5afaf279b',
      true_fhir_ids: "{'Observation': ['f8c4c18e-0515-597f-97ae-730a8ee52067']}",
    }),
  ].join('\r\n');

  it('reads every column that matters from tricky rows', () => {
    expect(isAgentBenchCsv(tricky)).toBe(true);
    const [q1, q2, q3, q4] = readAgentBenchCsv(tricky, 'tricky.csv');
    expect(q1.trueAnswer).toEqual([[115.8], [117.7]]);
    expect(q1.currentTime).toBe('2144-12-31 23:59:00');
    expect(q1.trueFhirIds.Observation).toHaveLength(2);
    expect(q1.mappableToFhir).toBe(true);
    expect(q1.trueAnswerText).toBe('[[115.8]\n [117.7]]');
    expect(q2.assumption).toBe('');
    expect(q2.currentTime).toBeNull();
    expect(q3.trueAnswer).toEqual([[null]]);
    expect(q3.trueFhirIds).toEqual({});
    expect(q4.question).toContain('"first"');
    expect(q4.trueAnswer).toEqual([['STAPH AUREUS COAG +', "O'BRIEN"]]);
    expect([q1, q2, q3, q4].map(answerKind)).toEqual(['number', 'yes-no', 'no-answer', 'text']);
  });

  it('names the row and column of a bad cell, and a missing column', () => {
    const bad = [HEADER, row({ question_id: 'x', question: 'q?', true_answer: '[[eval("1")]]', patient_fhir_id: 'p' })].join('\n');
    expect(() => readAgentBenchCsv(bad, 'bad.csv')).toThrow(/bad\.csv: row 2: true_answer: not a Python literal/);
    const ids = [
      HEADER,
      row({ question_id: 'x', question: 'q?', true_answer: '[]', patient_fhir_id: 'p', true_fhir_ids: "{'observation': ['a']}" }),
    ].join('\n');
    expect(() => readAgentBenchCsv(ids, 'ids.csv')).toThrow(AgentBenchCsvError);
    expect(isAgentBenchCsv('question_id,question\n1,2\n')).toBe(false);
    expect(() => readAgentBenchCsv('question_id,question,true_answer\nq,?,[]\n', 'm.csv')).toThrow(/missing column\(s\) patient_fhir_id/);
  });
});

describe('the current time', () => {
  it("is Boston wall-clock time with that day's offset", () => {
    expect(bostonDateTime('2136-12-31 23:59:00')).toBe('2136-12-31T23:59:00-05:00');
    expect(bostonDateTime('2125-07-04 12:00:00')).toBe('2125-07-04T12:00:00-04:00');
    expect(() => bostonDateTime('31/12/2136')).toThrow(/naive date-time/);
  });

  it('reaches the agent as the scenario clock; rows without one show no clock', () => {
    const [withTime, without] = readAgentBenchCsv(
      [
        HEADER,
        row({
          question_id: 'a',
          question: 'How many?',
          true_answer: '[[2]]',
          assumption: 'Assume the current time is 2125-12-31 23:59:00.',
          patient_fhir_id: 'p1',
          true_fhir_ids: "{'Encounter': ['e1', 'e2']}",
        }),
        row({ question_id: 'b', question: 'Did it?', true_answer: '[[1]]', patient_fhir_id: 'p2', true_fhir_ids: "{'Encounter': ['e3']}" }),
      ].join('\n'),
      'x.csv',
    );
    const a = agentBenchToScenario(withTime);
    expect(a.context.now).toBe('2125-12-31T23:59:00-05:00');
    expect(a.category).toBe('Encounter');
    expect(userPrompt(a)).toMatch(
      /Patient FHIR ID is p1\. Assume the current time is 2125-12-31 23:59:00\..*It's 2125-12-31T23:59:00-05:00 now\./s,
    );
    const b = agentBenchToScenario(without);
    expect(b.context.now).toBe(NO_ASSUMPTION_NOW);
    expect(userPrompt(b)).not.toContain(NO_ASSUMPTION_NOW);
  });
});
