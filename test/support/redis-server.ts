// A throwaway redis-server from PATH (Debian package `redis-server`) on a free loopback port, no persistence.
// kill() stops it like a crash (SIGKILL) and start() brings it back on the same port; pause() makes it hang.
// No binary: a reason to skip.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { freePort } from './free-port.ts';

export interface RedisServer {
  port: number;
  url: string;
  /** The running server's process id (undefined while killed). */
  pid(): number | undefined;
  /** Starts it again on the same port (after kill()); empty, since nothing is persisted. */
  start(): Promise<void>;
  /** SIGKILL, as in a crash; resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGSTOP: connections stay open and nothing answers, as in a hung server. */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  stop(): Promise<void>;
}

export type RedisStart = RedisServer | { skip: string };

const BINARY = process.env.REDIS_SERVER ?? 'redis-server';

function launch(port: number): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(BINARY, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`redis-server exited (${code ?? signal}): ${out.slice(-500)}`)));
  });
}

export async function startRedisServer(): Promise<RedisStart> {
  const probe = spawnSync(BINARY, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    return { skip: `no ${BINARY} on PATH (Debian: apt-get install -y redis-server; or set REDIS_SERVER)` };
  }
  const port = await freePort();
  let child: ChildProcess | undefined = await launch(port);
  const kill = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((resolve) => c.once('exit', resolve));
    c.kill('SIGKILL');
    await gone;
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pid: () => child?.pid,
    start: async () => {
      if (!child) child = await launch(port);
    },
    kill,
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    stop: async () => {
      child?.kill('SIGCONT');
      await kill();
    },
  };
}
