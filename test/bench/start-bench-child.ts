// A bench server in a child process, so the load generator does not share its event loop. The script prints one
// line `READY <port>` once it listens.
import { spawn, type ChildProcess } from 'node:child_process';

export interface BenchChild {
  port: number;
  child: ChildProcess;
}

export function startBenchChild(script: string, args: string[], o: { nodeArgs?: string[]; ipc?: boolean } = {}): Promise<BenchChild> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(o.nodeArgs ?? []), '--import', 'tsx', script, ...args], {
      stdio: ['ignore', 'pipe', 'inherit', ...(o.ipc ? (['ipc'] as const) : [])],
    });
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /READY (\d+)/.exec(out);
      if (!m) return;
      // Past READY the child's stdout is its log (LOG_LEVEL=info): read and dropped, not kept.
      child.stdout!.off('data', onData).resume();
      resolve({ port: Number(m[1]), child });
    };
    child.stdout!.on('data', onData);
    child.on('exit', (code, signal) => reject(new Error(`bench server ${args[0]} exited (${code ?? signal})`)));
  });
}
