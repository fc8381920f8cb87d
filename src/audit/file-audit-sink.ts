// AUDIT_SINK=file: an append-only NDJSON file, one AuditEvent per line. Records that arrive while a write is on
// disk are written together next (group commit), each batch with one write and one fdatasync, and a record's
// promise resolves only after its batch is synced: a reply never precedes its record, so a kill -9 can lose only
// the records of requests not yet answered. Past `maxBytes` the file is renamed to `<path>.<time>` (kept, never
// deleted: retention is the operator's) and a new one begun.
import { mkdir, open, rename, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { AuditSink } from './audit-trail.ts';

export interface FileAuditSinkOptions {
  path: string;
  maxBytes: number;
  /** Names rotated files. */
  now?: () => Date;
}

interface Pending {
  line: Buffer;
  resolve: () => void;
  reject: (err: Error) => void;
}

export async function createFileAuditSink({ path, maxBytes, now = () => new Date() }: FileAuditSinkOptions): Promise<AuditSink> {
  await mkdir(dirname(path), { recursive: true });
  let file: FileHandle = await open(path, 'a', 0o600);
  let size = (await file.stat()).size;
  let queue: Pending[] = [];
  let flushing: Promise<void> | undefined;
  let closed = false;

  async function rotate(): Promise<void> {
    await file.close();
    const stamp = now().toISOString().replace(/[:.]/g, '-');
    let target = `${path}.${stamp}`;
    for (let n = 1; await exists(target); n++) target = `${path}.${stamp}-${n}`;
    await rename(path, target);
    file = await open(path, 'a', 0o600);
    size = 0;
  }

  async function writeBatch(batch: Pending[]): Promise<void> {
    const bytes = Buffer.concat(batch.map((p) => p.line));
    if (size > 0 && size + bytes.length > maxBytes) await rotate();
    for (let at = 0; at < bytes.length;) at += (await file.write(bytes, at, bytes.length - at)).bytesWritten;
    await file.datasync();
    size += bytes.length;
  }

  async function flush(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      try {
        await writeBatch(batch);
        for (const p of batch) p.resolve();
      } catch (err) {
        for (const p of batch) p.reject(err as Error);
      }
    }
    flushing = undefined;
  }

  return {
    write(event) {
      if (closed) return Promise.reject(new Error('the audit file is closed'));
      return new Promise<void>((resolve, reject) => {
        queue.push({ line: Buffer.from(`${JSON.stringify(event)}\n`), resolve, reject });
        flushing ??= flush();
      });
    },
    async close() {
      closed = true;
      await flushing;
      await file.close();
    },
  };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
