// AUDIT_SINK=file: an append-only NDJSON file, one AuditEvent per line. Records that arrive while a write is on
// disk are written together next (group commit), each batch with one write and one fdatasync, and a record's
// promise resolves only after its batch is synced: a reply never precedes its record, so a kill -9 can lose only
// the records of requests not yet answered. Past `maxBytes` the file is renamed to `<path>.<time>` and a new one
// begun. The file and its rotated files together stay within `maxTotalBytes` (issue 28: a disk never fills
// silently): the oldest rotated files are deleted, each reported to `onDeleted`, or, without `deleteOldest`, a
// batch that would pass it is refused with an error naming AUDIT_FILE_MAX_TOTAL_BYTES.
import { mkdir, open, readdir, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { AuditSink } from './audit-trail.ts';

export interface FileAuditSinkOptions {
  path: string;
  maxBytes: number;
  /** The file and its rotated files together. Default unbounded. */
  maxTotalBytes?: number;
  /** Past `maxTotalBytes`: delete the oldest rotated files (true, the default) or refuse writes. */
  deleteOldest?: boolean;
  onDeleted?: (file: string, bytes: number) => void;
  /** Names rotated files. */
  now?: () => Date;
}

/** The rotated files of `path`, oldest first: their names carry the rotation's time, then `-1`, `-2`… (numeric). */
async function rotatedFiles(path: string): Promise<Array<{ file: string; bytes: number }>> {
  const prefix = `${basename(path)}.`;
  const names = (await readdir(dirname(path)))
    .filter((n) => n.startsWith(prefix))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  const sized = await Promise.all(
    names.map(async (n) => {
      const file = join(dirname(path), n);
      return { file, bytes: (await stat(file).catch(() => undefined))?.size };
    }),
  );
  return sized.filter((f): f is { file: string; bytes: number } => f.bytes !== undefined);
}

interface Pending {
  line: Buffer;
  resolve: () => void;
  reject: (err: Error) => void;
}

export async function createFileAuditSink({
  path,
  maxBytes,
  maxTotalBytes = Infinity,
  deleteOldest = true,
  onDeleted,
  now = () => new Date(),
}: FileAuditSinkOptions): Promise<AuditSink> {
  await mkdir(dirname(path), { recursive: true });
  let file: FileHandle = await open(path, 'a', 0o600);
  let size = (await file.stat()).size;
  // Listed at start and after each rotation; kept up to date in between, so a write costs no directory read.
  let rotated = Number.isFinite(maxTotalBytes) ? await rotatedFiles(path) : [];
  const rotatedBytes = () => rotated.reduce((n, f) => n + f.bytes, 0);

  /** Makes room for `incoming` more bytes in the current file, or throws when it may not. */
  async function makeRoom(incoming: number): Promise<void> {
    if (size + incoming + rotatedBytes() <= maxTotalBytes) return;
    rotated = await rotatedFiles(path); // an operator may have archived some meanwhile
    while (size + incoming + rotatedBytes() > maxTotalBytes) {
      const oldest = rotated[0];
      if (!deleteOldest || !oldest)
        throw new Error(
          `audit storage full: ${path} and its rotated files would pass AUDIT_FILE_MAX_TOTAL_BYTES (${maxTotalBytes} bytes)` +
            (deleteOldest ? '' : '; AUDIT_FILE_DELETE_OLDEST=false, so nothing is deleted: archive the rotated files'),
        );
      await unlink(oldest.file);
      rotated.shift();
      onDeleted?.(oldest.file, oldest.bytes);
    }
  }
  let queue: Pending[] = [];
  let flushing: Promise<void> | undefined;
  let closed = false;

  async function rotate(): Promise<void> {
    await file.close();
    const stamp = now().toISOString().replace(/[:.]/g, '-');
    let target = `${path}.${stamp}`;
    for (let n = 1; await exists(target); n++) target = `${path}.${stamp}-${n}`;
    await rename(path, target);
    rotated.push({ file: target, bytes: size });
    file = await open(path, 'a', 0o600);
    size = 0;
  }

  async function writeBatch(batch: Pending[]): Promise<void> {
    const bytes = Buffer.concat(batch.map((p) => p.line));
    if (size > 0 && size + bytes.length > maxBytes) await rotate();
    if (Number.isFinite(maxTotalBytes)) await makeRoom(bytes.length);
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
