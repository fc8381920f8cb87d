// N gateway replicas as separate processes on loopback (test/support/gateway-replica.ts), each with the same
// environment, e.g. one REDIS_URL. Keeps each one's log lines, for assertions on what a replica logged.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ENTRY = fileURLToPath(new URL('./gateway-replica.ts', import.meta.url));

export interface Replica {
  port: number;
  baseUrl: string;
  child: ChildProcess;
  /** Every pino line it printed so far, parsed. */
  logs(): Array<Record<string, unknown>>;
}

export interface Replicas {
  replicas: Replica[];
  stop(): Promise<void>;
}

function startReplica(env: Record<string, string>): Promise<Replica> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ENTRY], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let partial = '';
    let stderr = '';
    const replica: Omit<Replica, 'port' | 'baseUrl'> = {
      child,
      logs: () =>
        lines.flatMap((l) => {
          try {
            return [JSON.parse(l) as Record<string, unknown>];
          } catch {
            return [];
          }
        }),
    };
    child.stdout!.on('data', (d: Buffer) => {
      const parts = (partial + d.toString()).split('\n');
      partial = parts.pop()!;
      for (const line of parts) {
        const ready = /^READY (\d+)$/.exec(line);
        if (ready) resolve({ ...replica, port: Number(ready[1]), baseUrl: `http://127.0.0.1:${ready[1]}` });
        else lines.push(line);
      }
    });
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    child.once('exit', (code, signal) => reject(new Error(`gateway replica exited (${code ?? signal}): ${stderr}`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await gone;
  clearTimeout(timer);
}

export async function startReplicas(count: number, env: Record<string, string>): Promise<Replicas> {
  const started = await Promise.allSettled(Array.from({ length: count }, () => startReplica(env)));
  const replicas = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stop = async () => {
    await Promise.all(replicas.map((r) => stopChild(r.child)));
  };
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  return { replicas, stop };
}
