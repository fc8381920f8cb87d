// The answer convention (MedAgentBench-compatible): a FINISH list. In order of preference:
// 1. the arguments of a `finish` tool call: {"answer": [...]} (or a bare list);
// 2. the last `FINISH([...])` in the final assistant text;
// 3. a final text that is itself a JSON list.
// Anything else is "no answer" (null), which graders treat as wrong, never as a crash.
import { balancedEnd } from '../src/vocabulary/openai/extract-json.ts';

export interface ParsedAnswer {
  answer: unknown[] | null;
  raw: string | null;
}

export function parseFinishArguments(args: string): ParsedAnswer {
  try {
    const parsed: unknown = JSON.parse(args);
    if (Array.isArray(parsed)) return { answer: parsed, raw: args };
    if (parsed && typeof parsed === 'object' && Array.isArray((parsed as { answer?: unknown }).answer)) {
      return { answer: (parsed as { answer: unknown[] }).answer, raw: args };
    }
  } catch {
    // fall through: malformed arguments are simply no answer
  }
  return { answer: null, raw: args };
}

export function parseAnswerText(text: string | null | undefined): ParsedAnswer {
  if (text == null) return { answer: null, raw: null };
  const idx = text.lastIndexOf('FINISH(');
  if (idx >= 0) {
    const inner = balancedList(text.slice(idx + 'FINISH('.length));
    if (inner !== null) {
      try {
        const parsed: unknown = JSON.parse(inner);
        if (Array.isArray(parsed)) return { answer: parsed, raw: text };
      } catch {
        // MedAgentBench answers are JSON; anything else is malformed
      }
    }
    return { answer: null, raw: text };
  }
  const trimmed = text.trim().replace(/^```(?:json)?\s*|\s*```$/g, '');
  if (trimmed.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (Array.isArray(parsed)) return { answer: parsed, raw: text };
    } catch {
      // not JSON
    }
  }
  return { answer: null, raw: text };
}

/** The `[...]` at the start of s, honouring nesting and strings. */
function balancedList(s: string): string | null {
  const start = s.indexOf('[');
  if (start < 0 || s.slice(0, start).trim() !== '') return null;
  const end = balancedEnd(s, start);
  return end < 0 ? null : s.slice(start, end);
}
