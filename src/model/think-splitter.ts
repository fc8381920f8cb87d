// Splits inline `<think>…</think>` reasoning out of content, incrementally: tags may arrive split across chunks.
// Only a think block at the very start (after whitespace) counts, so a model quoting "<think>" later is left alone.

const OPEN = '<think>';
const CLOSE = '</think>';

export interface TextPiece {
  type: 'reasoning' | 'content';
  text: string;
}

export interface ThinkSplitter {
  push(text: string): TextPiece[];
  /** Past the think block with nothing held back: from here on, text is content exactly as it came. */
  passing(): boolean;
  /** Flushes what was held back; an unclosed think block is reasoning. */
  end(): TextPiece[];
}

/** Length of the longest suffix of `s` that is a proper prefix of `tag`: bytes that might start the tag. */
function heldBack(s: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, s.length); n > 0; n--) {
    if (s.endsWith(tag.slice(0, n))) return n;
  }
  return 0;
}

function emit(out: TextPiece[], type: TextPiece['type'], text: string): void {
  if (text) out.push({ type, text });
}

export function createThinkSplitter(): ThinkSplitter {
  let mode: 'start' | 'reasoning' | 'content' = 'start';
  let buf = '';
  let trimNext = false;

  function drain(final: boolean): TextPiece[] {
    const out: TextPiece[] = [];
    for (;;) {
      if (mode === 'start') {
        const t = buf.trimStart();
        if (t.startsWith(OPEN)) {
          buf = t.slice(OPEN.length);
          mode = 'reasoning';
          continue;
        }
        if (!final && OPEN.startsWith(t)) return out;
        mode = 'content';
        continue;
      }
      if (mode === 'reasoning') {
        const i = buf.indexOf(CLOSE);
        if (i >= 0) {
          emit(out, 'reasoning', buf.slice(0, i));
          buf = buf.slice(i + CLOSE.length);
          mode = 'content';
          trimNext = true;
          continue;
        }
        const keep = final ? 0 : heldBack(buf, CLOSE);
        emit(out, 'reasoning', buf.slice(0, buf.length - keep));
        buf = buf.slice(buf.length - keep);
        return out;
      }
      if (trimNext) {
        buf = buf.trimStart();
        if (!buf) return out;
        trimNext = false;
      }
      emit(out, 'content', buf);
      buf = '';
      return out;
    }
  }

  return {
    passing: () => mode === 'content' && !trimNext && !buf,
    push(text) {
      // Past the think block (the common case, chunk after chunk): nothing to hold back or split.
      if (mode === 'content' && !trimNext && !buf) return text ? [{ type: 'content', text }] : [];
      buf += text;
      return drain(false);
    },
    end() {
      return drain(true);
    },
  };
}

/** Whole-string form, for non-streamed replies. */
export function splitThink(content: string): { reasoning: string; content: string } {
  // Most replies carry no tags at all (the upstream split reasoning out already): skip the state machine.
  if (!content.includes('think>')) return { reasoning: '', content };
  const s = createThinkSplitter();
  const pieces = [...s.push(content), ...s.end()];
  return {
    reasoning: pieces
      .filter((p) => p.type === 'reasoning')
      .map((p) => p.text)
      .join(''),
    content: pieces
      .filter((p) => p.type === 'content')
      .map((p) => p.text)
      .join(''),
  };
}
