// A tools-mode sample (the gateway's tools instead of the benchmark's text protocol) as the AgentBench transcript
// refsol grades: each write-tool call becomes the POST it stands for (`POST <base><Type>` + the payload as asked),
// answered as accepted when the tool wrote and as invalid when it refused; the FINISH list becomes the result.
// "As asked": the stored resource is valid FHIR, the payload keeps the model's own forms where FHIR's differ —
// the route a bare string as given (stored as {text}), the one note an object (FHIR stores a list of them).
import type { Resource } from '@medplum/fhirtypes';
import type { SolverOutput } from '../task.ts';
import type { RefsolRun } from './refsol-grader.ts';
import type { RefsolMessage } from './refsol-transcript.ts';

const WRITE_TOOLS: Readonly<Record<string, string>> = {
  record_observation: 'Observation',
  order_medication: 'MedicationRequest',
  order_service: 'ServiceRequest',
};
const ACCEPTED = 'POST request accepted (written through the tool)';
const REFUSED = 'Invalid POST request (the tool refused it)';

function parseArgs(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The payload the model asked for: the stored resource in the model's own forms, without what the server added. */
function askedPayload(stored: Resource, args: Record<string, unknown>): Record<string, unknown> {
  const { id: _id, meta: _meta, ...rest } = structuredClone(stored) as Resource & Record<string, unknown>;
  void _id;
  void _meta;
  const body = rest as Record<string, unknown> & { dosageInstruction?: Array<Record<string, unknown>>; note?: unknown[] };
  if (typeof args.route === 'string' && body.dosageInstruction?.[0]) body.dosageInstruction[0].route = args.route;
  if (typeof args.note === 'string' && Array.isArray(body.note) && body.note.length === 1) body.note = body.note[0] as never;
  return body;
}

/** The text inside FINISH(...) as the protocol would have it: the list given, or null when there was none. */
function finishText(output: SolverOutput): string | null {
  if (output.answer !== null) return JSON.stringify(output.answer);
  const raw = output.rawAnswer ?? '';
  const at = raw.lastIndexOf('FINISH(');
  return at < 0
    ? null
    : raw
        .slice(at + 'FINISH('.length)
        .trim()
        .slice(0, -1);
}

export function toolWritesTranscript(o: { instruction: string; output: SolverOutput; writes: Resource[]; base: string }): RefsolRun {
  const history: RefsolMessage[] = [{ role: 'user', content: o.instruction }];
  for (const call of o.output.toolTrace) {
    const type = WRITE_TOOLS[call.name];
    if (!type) continue;
    const written = call.written?.find((w) => w.resourceType === type);
    const stored = written && o.writes.find((r) => r.resourceType === type && r.id === written.id);
    if (call.ok && stored) {
      history.push({ role: 'agent', content: `POST ${o.base}${type}\n${JSON.stringify(askedPayload(stored, parseArgs(call.arguments)))}` });
      history.push({ role: 'user', content: ACCEPTED });
    } else {
      history.push({ role: 'agent', content: `POST ${o.base}${type}\n${call.arguments}` });
      history.push({ role: 'user', content: REFUSED });
    }
  }
  const result = finishText(o.output);
  if (result !== null) history.push({ role: 'agent', content: `FINISH(${result})` });
  return { history, result };
}
