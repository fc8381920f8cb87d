// Tool calls as a model might write them: a registered tool (or a made-up name) with arguments generated from its
// zod input schema, often mutated, sometimes not JSON at all.
import fc from 'fast-check';
import { z } from 'zod';
import { toolRegistry } from '../../src/tools/index.ts';
import { arbitraryFromJsonSchema } from './arbitrary-from-json-schema.ts';
import { mutated, PROTO_KEYS } from './mutate-json.ts';
import { deepNesting, serialize } from './raw-json.ts';

export interface ToolCallCase {
  name: string;
  /** The arguments exactly as the model sent them. */
  argsJson: string;
}

export interface ClinicalHints {
  /** Ids that exist in the store, so searches find something. */
  patientIds: string[];
  /** Ids of any type, for read_resource. */
  resourceIds: string[];
}

const CODES = ['2823-3', 'http://loinc.org|2823-3', '8867-4', 'K', 'http://loinc.org|', '|x', ',', 'a,b,,c', '*'];
const DATES = [
  '2024-05-01',
  '2024',
  '2024-02',
  '2024-02-30',
  '0000-00-00',
  '9999-12-31T23:59:59Z',
  '2024-05-01T08:00:00+14:00',
  '1900-01-01',
];

const RAW_ARGUMENTS = [
  '',
  ' ',
  'null',
  '[]',
  '"x"',
  '1',
  'true',
  '{',
  '{"a":',
  '}',
  '{}{}',
  '{"patient":1e999}',
  'NaN',
  '\u0000',
  '{"__proto__":{"polluted":true}}',
];

export function toolCallCase(hints: ClinicalHints): fc.Arbitrary<ToolCallCase> {
  const patient = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...hints.patientIds) },
    { weight: 2, arbitrary: fc.constantFrom(...hints.patientIds).map((id) => `Patient/${id}`) },
    { weight: 1, arbitrary: fc.constantFrom('Patient/', 'Patient/Patient/x', 'x'.repeat(65), '../Patient', '', 'S1000001', ...PROTO_KEYS) },
  );
  const byProperty = {
    patient,
    id: fc.oneof(
      fc.constantFrom(...hints.resourceIds, ...hints.patientIds),
      fc.constantFrom('__proto__', 'constructor', '..', 'a'.repeat(64), 'a'.repeat(65)),
    ),
    code: fc.oneof(fc.constantFrom(...CODES), fc.string({ maxLength: 20 })),
    date_from: fc.constantFrom(...DATES),
    date_to: fc.constantFrom(...DATES),
  };
  const perTool = [...toolRegistry.values()].map((tool) => {
    const schema = z.toJSONSchema(tool.inputSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    const args = arbitraryFromJsonSchema(schema, { byProperty });
    const argsJson = fc.oneof(
      { weight: 6, arbitrary: args.map(serialize) },
      { weight: 3, arbitrary: mutated(args).map(serialize) },
      { weight: 1, arbitrary: fc.constantFrom(...RAW_ARGUMENTS, serialize(deepNesting(5000))) },
    );
    return argsJson.map((a) => ({ name: tool.name, argsJson: a }));
  });
  const oddName = fc
    .tuple(
      fc.constantFrom('', 'unknown_tool', 'Find_Patients', 'find_patients ', ...PROTO_KEYS),
      fc.constantFrom('{}', '{"patient":"S1"}', ''),
    )
    .map(([name, argsJson]) => ({ name, argsJson }));
  return fc.oneof({ weight: 12, arbitrary: fc.oneof(...perTool) }, { weight: 1, arbitrary: oddName });
}
