// Pulls `<tool_call>{json}</tool_call>` blocks out of generated text, incrementally: tags may arrive split across
// chunks at any character. Content streams through at once, except a trailing `<…` that may still become the
// opening tag, and trailing whitespace, which is sent only once more text follows. So the streamed content equals
// the whole text with its call blocks removed and its ends trimmed, whatever the chunking.
import { parseToolCallBlock, type ParsedToolCall } from './parse-tool-call-block.ts';

export const TOOL_CALL_OPEN = '<tool_call>';
const TOOL_CALL_CLOSE = '</tool_call>';

export type TextPiece = { type: 'content'; text: string } | ({ type: 'tool-call' } & ParsedToolCall);

export interface ToolCallTextParser {
  push(text: string): TextPiece[];
  /**
   * Flushes what was held back. With `acceptUnterminated` (generation ended by `stop` or `length`), a final block
   * without `</tool_call>` still counts as a call if its JSON parses; otherwise it is content.
   */
  end(o: { acceptUnterminated: boolean }): TextPiece[];
}

/** OPEN_PREFIXES[n] is the first n characters of the opening tag. */
const OPEN_PREFIXES = Array.from({ length: TOOL_CALL_OPEN.length }, (_, n) => TOOL_CALL_OPEN.slice(0, n));
const LT = 0x3c;

/** Length of the suffix of `s` that may start the opening tag. The tag has no '<' after its first character, so only the last '<' can start it. */
function heldBack(s: string): number {
  for (let k = s.length - 1; k >= Math.max(0, s.length - TOOL_CALL_OPEN.length + 1); k--) {
    if (s.charCodeAt(k) !== LT) continue;
    return s.startsWith(OPEN_PREFIXES[s.length - k]!, k) ? s.length - k : 0;
  }
  return 0;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

export function createToolCallTextParser(): ToolCallTextParser {
  let started = false; // any content sent yet (whitespace before it is dropped)
  let space = ''; // trailing whitespace, sent only if more content follows
  let partial = ''; // a possible start of the opening tag
  let inBlock = false;
  let block: string[] = [];
  let blockLength = 0;
  let tail = ''; // the block's last characters, enough to find a closing tag split across chunks

  function content(text: string, out: TextPiece[]): void {
    let end = text.length;
    while (end > 0 && isSpace(text.charCodeAt(end - 1))) end--;
    if (end === 0) {
      if (started) space += text;
      return;
    }
    let body = end === text.length ? text : text.slice(0, end);
    if (!started) {
      body = body.trimStart();
      started = true;
    } else if (space) {
      body = space + body;
      space = '';
    }
    out.push({ type: 'content', text: body });
    if (end < text.length) space = text.slice(end);
  }

  function closeBlock(text: string, out: TextPiece[]): void {
    const call = parseToolCallBlock(text, { lenient: true });
    if (call) out.push({ type: 'tool-call', ...call });
    else content(TOOL_CALL_OPEN + text + TOOL_CALL_CLOSE, out);
  }

  /** Feeds block text; returns what follows the closing tag, or null while the block is still open. */
  function feedBlock(s: string, out: TextPiece[]): string | null {
    const window = tail + s;
    const j = window.indexOf(TOOL_CALL_CLOSE);
    if (j < 0) {
      block.push(s);
      blockLength += s.length;
      tail = window.length < TOOL_CALL_CLOSE.length ? window : window.slice(window.length - TOOL_CALL_CLOSE.length + 1);
      return null;
    }
    const whole = block.length ? block.join('') + s : s;
    const at = blockLength - tail.length + j;
    inBlock = false;
    block = [];
    blockLength = 0;
    tail = '';
    closeBlock(whole.slice(0, at), out);
    return whole.slice(at + TOOL_CALL_CLOSE.length);
  }

  return {
    push(text) {
      const out: TextPiece[] = [];
      let s: string | null = text;
      while (s) {
        if (inBlock) {
          s = feedBlock(s, out);
          continue;
        }
        if (partial) {
          s = partial + s;
          partial = '';
        }
        const i = s.indexOf(TOOL_CALL_OPEN);
        if (i >= 0) {
          if (i > 0) content(s.slice(0, i), out);
          inBlock = true;
          s = s.slice(i + TOOL_CALL_OPEN.length);
          continue;
        }
        const keep = heldBack(s);
        if (keep === 0) content(s, out);
        else {
          if (keep < s.length) content(s.slice(0, s.length - keep), out);
          partial = s.slice(s.length - keep);
        }
        s = null;
      }
      return out;
    },
    end({ acceptUnterminated }) {
      const out: TextPiece[] = [];
      if (inBlock) {
        const text = block.join('');
        const call = acceptUnterminated ? parseToolCallBlock(text, { lenient: false }) : null;
        if (call) out.push({ type: 'tool-call', ...call });
        else content(TOOL_CALL_OPEN + text, out);
      } else if (partial) {
        content(partial, out);
      }
      inBlock = false;
      block = [];
      blockLength = 0;
      tail = '';
      partial = '';
      space = '';
      return out;
    },
  };
}

/** Whole-text form, for non-streamed replies. Content is null when nothing but calls (and whitespace) was said. */
export function parseToolCallText(text: string, o: { acceptUnterminated: boolean }): { content: string | null; calls: ParsedToolCall[] } {
  const parser = createToolCallTextParser();
  const pieces = [...parser.push(text), ...parser.end(o)];
  let content = '';
  const calls: ParsedToolCall[] = [];
  for (const p of pieces) {
    if (p.type === 'content') content += p.text;
    else calls.push({ name: p.name, arguments: p.arguments });
  }
  return { content: content || null, calls };
}
