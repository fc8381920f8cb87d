// The README's fenced code blocks, classified for test/readme-blocks.test.ts, so every block a reader may paste is
// run and new blocks are picked up without anyone listing them.
//
// Convention: bash/sh/shell, ts/js (and typescript/javascript/mjs) and python blocks run. A `text` block whose
// first line starts with `$ ` is a transcript: its command runs and the output is compared with what follows.
// Everything else (json, yaml, text, no language) is data. A block that cannot run here says why, in an HTML
// comment on the line just before its fence: `<!-- norun: needs Docker -->` (readers do not see it; the test
// requires a reason).

export type BlockKind = 'bash' | 'node' | 'python' | 'transcript' | 'data';

export interface CodeBlock {
  kind: BlockKind;
  /** The fence's language word, lower-cased ('' when none). */
  lang: string;
  code: string;
  /** 1-based line of the opening fence in the README. */
  line: number;
  /** The nearest heading above the block. */
  section: string;
  /** Why the block does not run in the test, from `<!-- norun: reason -->`; undefined when it runs. */
  norun?: string;
}

const KINDS: Record<string, BlockKind> = {
  bash: 'bash',
  sh: 'bash',
  shell: 'bash',
  ts: 'node',
  typescript: 'node',
  js: 'node',
  javascript: 'node',
  mjs: 'node',
  python: 'python',
  py: 'python',
};

const NORUN = /^<!--\s*norun:(.*?)-->\s*$/;

export function readmeCodeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const heading = lines[i]!.match(/^#{1,6}\s+(.*)$/);
    if (heading) section = heading[1]!.trim();
    const open = lines[i]!.match(/^( {0,3})(`{3,})\s*([^`\s]*)[^`]*$/);
    if (!open) continue;
    const [, indent, fence, word] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !lines[j]!.match(new RegExp(`^ {0,3}${fence}\\s*$`)); j++) body.push(lines[j]!.slice(indent!.length));
    const lang = word!.toLowerCase();
    const code = body.join('\n');
    const kind: BlockKind = KINDS[lang] ?? (lang === 'text' && code.startsWith('$ ') ? 'transcript' : 'data');
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const norun = before >= 0 ? lines[before]!.trim().match(NORUN)?.[1]?.trim() : undefined;
    blocks.push({ kind, lang, code, line: i + 1, section, ...(norun !== undefined ? { norun } : {}) });
    i = j;
  }
  return blocks;
}

/** A bash block's commands: lines joined while a quote is open or a line ends in `\`; comment-only lines dropped. */
export function bashCommands(code: string): string[] {
  const commands: string[] = [];
  let current = '';
  let quote: string | null = null;
  for (const line of code.split('\n')) {
    current += current ? `\n${line}` : line;
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      if (quote) {
        if (c === quote) quote = null;
        else if (c === '\\' && quote === '"') i++;
      } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) break;
      else if (c === "'" || c === '"') quote = c;
      else if (c === '\\') i++;
    }
    if (quote || line.trimEnd().endsWith('\\')) continue;
    if (current.trim() !== '' && !current.trim().startsWith('#')) commands.push(current.trim());
    current = '';
  }
  return commands;
}

/**
 * A transcript's command (the `$ ` line and its continuations) and the output shown after it. Continuation lines
 * of the command are the ones before the first line that starts the output.
 */
export function splitTranscript(code: string): { command: string; output: string } {
  const lines = code.split('\n');
  const command: string[] = [lines[0]!.slice(2)];
  let k = 1;
  while (k < lines.length && command.at(-1)!.trimEnd().endsWith('\\')) command.push(lines[k++]!);
  return { command: command.join('\n'), output: lines.slice(k).join('\n') };
}

/** The lines outside fenced code blocks (`text`: with inline code spans blanked), numbered from 1. */
function proseLines(markdown: string): Array<{ raw: string; text: string; line: number }> {
  const out: Array<{ raw: string; text: string; line: number }> = [];
  let fence: string | null = null;
  markdown.split('\n').forEach((text, i) => {
    const marker = text.match(/^ {0,3}(`{3,})/)?.[1];
    if (fence) {
      if (marker && text.trim() === fence) fence = null;
    } else if (marker) fence = marker;
    else out.push({ raw: text, text: text.replace(/`+[^`]*`+/g, (span) => ' '.repeat(span.length)), line: i + 1 });
  });
  return out;
}

/** Relative link and image targets (`[text](target)`) outside code; http(s) and mailto links are left out. */
export function relativeLinks(markdown: string): Array<{ target: string; line: number }> {
  const links: Array<{ target: string; line: number }> = [];
  for (const { text, line } of proseLines(markdown)) {
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (!/^(https?:|mailto:)/.test(m[1]!)) links.push({ target: m[1]!, line });
    }
  }
  return links;
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to `-`, repeats `-1`, `-2`…. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const { raw } of proseLines(markdown)) {
    const heading = raw.match(/^#{1,6}\s+(.*)$/)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let anchor = slug;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${slug}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}
