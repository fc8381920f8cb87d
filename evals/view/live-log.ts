// An eval log read as it grows: each refresh parses only the bytes appended since the last one, so a viewer can
// poll a 3,000-sample log cheaply and show a run in progress. A torn last line waits for its end; a file that
// shrank (a resume cut a torn tail) is read again from the start.
import { open, stat } from 'node:fs/promises';
import { addLatestAttempt, LogRecordSchema, type FooterRecord, type HeaderRecord, type SampleRecord } from '../eval-log.ts';

export class LiveLog {
  header: HeaderRecord | undefined;
  footer: FooterRecord | undefined;
  samples: SampleRecord[] = [];
  badLines = 0;
  /** Bumped whenever a refresh changed anything. */
  version = 0;
  private offset = 0;
  private pending = Buffer.alloc(0);
  private keys = new Map<string, number>();

  constructor(readonly path: string) {}

  async refresh(): Promise<boolean> {
    const { size } = await stat(this.path);
    if (size < this.offset) this.reset();
    if (size === this.offset) return false;
    const fh = await open(this.path, 'r');
    let chunk: Buffer;
    try {
      chunk = Buffer.alloc(size - this.offset);
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, this.offset);
      chunk = chunk.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
    this.offset += chunk.length;
    const data = Buffer.concat([this.pending, chunk]);
    const lastNewline = data.lastIndexOf(0x0a);
    this.pending = Buffer.from(data.subarray(lastNewline + 1));
    if (lastNewline < 0) return false;
    for (const line of data.subarray(0, lastNewline).toString('utf8').split('\n')) this.add(line);
    this.version++;
    return true;
  }

  private add(line: string): void {
    if (!line.trim()) return;
    let parsed;
    try {
      parsed = LogRecordSchema.safeParse(JSON.parse(line));
    } catch {
      parsed = undefined;
    }
    if (!parsed?.success) {
      this.badLines++;
      return;
    }
    const rec = parsed.data;
    if (rec.type === 'header') this.header ??= rec;
    else if (rec.type === 'footer') this.footer = rec;
    // A retried sample (--retry-errors) shows its latest attempt, in the place of the first.
    else if (rec.type === 'sample') addLatestAttempt(this.samples, this.keys, rec);
  }

  sample(key: string): SampleRecord | undefined {
    const i = this.keys.get(key);
    return i === undefined ? undefined : this.samples[i];
  }

  private reset(): void {
    Object.assign(this, { header: undefined, footer: undefined, samples: [], badLines: 0, offset: 0, pending: Buffer.alloc(0) });
    this.keys = new Map();
  }
}
