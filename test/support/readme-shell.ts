// Runs the bash commands of the README and the docs pages as a reader would paste them, one command at a time.
// The pages' ports (8080, 8282, …) are mapped to free ones, so the suite never needs a fixed port. Servers
// (`npm start`, or any command ending in `&`) are started, waited for (the port answers; for `npm start`,
// `GET /health` 200) and kept until the session closes, so the commands after them in the section can use them.
// `npm ci` (alone or before `&&`) is what CI ran just before the suite (it would replace node_modules under the
// running tests), and `npm ci && npm test` is checked to be exactly CI's own line rather than run inside itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from './free-port.ts';
import { killGroup } from './kill-group.ts';

export interface ShellResult {
  stdout: string;
  stderr: string;
}

export interface StartedServer {
  command: string;
  readmePort: number;
  port: number;
  child: ChildProcess;
  output: () => string;
}

/** Replaces the README's ports by the mapped ones wherever a URL, `PORT=` or `--port` names them. */
export function mapPorts(text: string, ports: ReadonlyMap<number, number>): string {
  const swap = (p: string) => String(ports.get(Number(p)) ?? p);
  return text
    .replace(/\b(127\.0\.0\.1|localhost):(\d{2,5})\b/g, (_, host: string, p: string) => `${host}:${swap(p)}`)
    .replace(/\bPORT=(\d{2,5})\b/g, (_, p: string) => `PORT=${swap(p)}`)
    .replace(/--port([ =])(\d{2,5})\b/g, (_, sep: string, p: string) => `--port${sep}${swap(p)}`);
}

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' }, () => {
      // A connection from the port to itself (TCP simultaneous open, possible in the ephemeral range) is no server.
      const self = socket.localPort === port;
      socket.destroy();
      resolve(!self);
    });
    socket.once('error', () => resolve(false));
  });

/** GET /health answered 200; a refused or reset connection is "not yet". */
const healthy = (port: number) =>
  fetch(`http://127.0.0.1:${port}/health`).then(
    (r) => r.status === 200,
    () => false,
  );

const tail = (s: string) => s.split('\n').slice(-25).join('\n');

export class ReadmeShell {
  readonly servers: StartedServer[] = [];
  readonly ports: Map<number, number>;

  constructor(
    private readonly o: { cwd: string; env: NodeJS.ProcessEnv; ports: ReadonlyMap<number, number>; ciScript: string; timeoutMs: number },
  ) {
    this.ports = new Map(o.ports);
  }

  /** Runs one command from `bashCommands()`; rejects with its output when it fails. */
  async run(command: string): Promise<ShellResult> {
    if (command === 'npm ci') return { stdout: '', stderr: '' };
    if (/^npm ci && npm test\b/.test(command)) {
      if (!this.o.ciScript.includes('npm ci && npm test')) throw new Error(`.ci/run does not run the README's "${command}"`);
      return { stdout: '', stderr: '' };
    }
    const cmd = command.replace(/^npm ci && /, '');
    const background = /\s&\s*(#.*)?$/.test(cmd);
    if (background || /(^|\s|&&\s*)npm start\b/.test(cmd)) return this.startServer(cmd.replace(/\s&\s*(#.*)?$/, ''));
    return this.exec(mapPorts(cmd, this.ports));
  }

  private exec(cmd: string): Promise<ShellResult> {
    return new Promise((resolve, reject) => {
      const child = spawn('bash', ['-o', 'pipefail', '-c', cmd], {
        cwd: this.o.cwd,
        env: this.o.env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d));
      child.stderr.on('data', (d: Buffer) => (stderr += d));
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), this.o.timeoutMs);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) return resolve({ stdout, stderr });
        reject(new Error(`\`${cmd}\` exited ${code ?? signal}\n--- stdout\n${tail(stdout)}\n--- stderr\n${tail(stderr)}`));
      });
    });
  }

  private async startServer(command: string): Promise<ShellResult> {
    const npmStart = /\bnpm start\b/.test(command);
    const named = command.match(/\bPORT=(\d+)/)?.[1] ?? command.match(/--port[ =](\d+)/)?.[1];
    const readmePort = Number(named ?? (npmStart ? 8080 : NaN));
    if (!Number.isInteger(readmePort)) throw new Error(`\`${command}\`: a background command must name its port (PORT= or --port)`);
    for (const s of this.servers.filter((x) => x.readmePort === readmePort)) await stop(s.child);
    const port = await freePort();
    this.ports.set(readmePort, port);
    const cmd = mapPorts(command, this.ports);
    let out = '';
    const child = spawn('bash', ['-c', cmd], {
      cwd: this.o.cwd,
      env: { ...this.o.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdout!.on('data', (d: Buffer) => (out += d));
    child.stderr!.on('data', (d: Buffer) => (out += d));
    const server: StartedServer = { command: cmd, readmePort, port, child, output: () => out };
    this.servers.push(server);
    const deadline = Date.now() + this.o.timeoutMs;
    // The gateway binds its port for an instant before the slow part of boot (assertPortFree's probe), so an open
    // port is not yet a server: `npm start` is ready when GET /health answers 200, which is polled the same way.
    const ready = npmStart ? () => healthy(port) : () => portOpen(port);
    while (!(await ready())) {
      if (child.exitCode !== null) throw new Error(`\`${cmd}\` exited ${child.exitCode} before it was ready\n${tail(out)}`);
      if (Date.now() > deadline) throw new Error(`\`${cmd}\` was not ready on ${port} in time\n${tail(out)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    return { stdout: out, stderr: '' };
  }

  async close(): Promise<void> {
    await Promise.all(this.servers.map((s) => stop(s.child)));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  killGroup(child, 'SIGTERM');
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
