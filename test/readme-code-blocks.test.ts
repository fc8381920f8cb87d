// The README block extractor and command splitter that test/readme-blocks.test.ts relies on.
import { describe, expect, it } from 'vitest';
import { bashCommands, readmeCodeBlocks, splitTranscript } from './support/readme-code-blocks.ts';
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
