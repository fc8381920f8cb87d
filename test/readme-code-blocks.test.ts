// The block extractor, command splitter and link reader that test/readme-blocks.test.ts relies on.
import { describe, expect, it } from 'vitest';
import { bashCommands, headingAnchors, readmeCodeBlocks, relativeLinks, splitTranscript } from './support/readme-code-blocks.ts';
import { mapPorts } from './support/readme-shell.ts';

const MD = [
  '## Start',
  '```bash',
  'npm start   # port 8080',
  '```',
  '### Later',
  '<!-- norun: needs Docker -->',
  '',
  '```bash',
  'docker compose up',
  '```',
  '```text',
  '$ curl -s localhost:8282/x \\',
  "    -d '{}'",
  '{"ok":true}',
  '```',
  '```json',
  '{"a":1}',
  '```',
  '```ts',
  "console.log('# not a heading')",
  '```',
].join('\n');

describe('readmeCodeBlocks', () => {
  it('classifies blocks, reads norun reasons and keeps the nearest heading', () => {
    const blocks = readmeCodeBlocks(MD);
    expect(blocks.map((b) => [b.kind, b.line, b.section, b.norun])).toEqual([
      ['bash', 2, 'Start', undefined],
      ['bash', 8, 'Later', 'needs Docker'],
      ['transcript', 11, 'Later', undefined],
      ['data', 16, 'Later', undefined],
      ['node', 19, 'Later', undefined],
    ]);
  });

  it('splits a transcript into its command (with continuations) and the output', () => {
    const t = readmeCodeBlocks(MD)[2]!;
    expect(splitTranscript(t.code)).toEqual({ command: "curl -s localhost:8282/x \\\n    -d '{}'", output: '{"ok":true}' });
  });
});

describe('bashCommands', () => {
  it('joins continuations and open quotes, drops comments, keeps # inside quotes', () => {
    const code = ['# a comment', 'curl -s x \\', '  -d \'{"a":', "   1}'", '', "echo 'a # b'   # trailing", 'ls'].join('\n');
    expect(bashCommands(code)).toEqual(['curl -s x \\\n  -d \'{"a":\n   1}\'', "echo 'a # b'   # trailing", 'ls']);
  });
});

describe('mapPorts', () => {
  it('maps URLs, PORT= and --port, and leaves other numbers alone', () => {
    const ports = new Map([
      [8080, 41000],
      [8383, 42000],
    ]);
    expect(mapPorts('curl http://127.0.0.1:8080/v1 localhost:8080 PORT=8080 --port 8383 --port=8383 8080 :9999', ports)).toBe(
      'curl http://127.0.0.1:41000/v1 localhost:41000 PORT=41000 --port 42000 --port=42000 8080 :9999',
    );
  });
});

describe('relativeLinks and headingAnchors', () => {
  const page = [
    '# Title',
    'See [the API](docs/api.md#the-contract-in-short), ![a chart](docs/report.png) and [a site](https://example.org).',
    '`[not a link](nowhere.md)` and [`LOCAL_MODEL`](docs/local-model.md)',
    '```md',
    '[inside a block](nowhere.md)',
    '## Not a heading',
    '```',
    '## In-process model (`LOCAL_MODEL`)',
    '### Worked example: a two-step answer',
    '## Title',
  ].join('\n');

  it('finds relative links and images outside code, with their lines', () => {
    expect(relativeLinks(page)).toEqual([
      { target: 'docs/api.md#the-contract-in-short', line: 2 },
      { target: 'docs/report.png', line: 2 },
      { target: 'docs/local-model.md', line: 3 },
    ]);
  });

  it("gives headings GitHub's anchors, numbering repeats", () => {
    expect([...headingAnchors(page)]).toEqual(['title', 'in-process-model-local_model', 'worked-example-a-two-step-answer', 'title-1']);
  });
});
