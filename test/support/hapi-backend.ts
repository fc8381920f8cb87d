// A real HAPI FHIR R4 server for tests: HAPI_BASE_URL if set, else the hapiproject/hapi image when a Docker
// engine answers, else the Docker-free launcher in test/hapi (Java 17; Maven for the first build), else a
// reason to skip. "Cannot run here" is a skip; a build or start-up that fails is an error.
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { killGroup } from './kill-group.ts';

/** Same major as docker-compose.yml; test/hapi/pom.xml pins the matching HAPI library version. */
const HAPI_IMAGE = 'hapiproject/hapi:v8.8.0-1';

const HAPI_DIR = fileURLToPath(new URL('../hapi/', import.meta.url));

export interface HapiBackend {
  /** e.g. http://127.0.0.1:41234/fhir */
  baseUrl: string;
  /** From launch to the first 200 on /metadata; excludes any build. 0 for HAPI_BASE_URL. */
  startupMs: number;
  kind: 'external' | 'docker' | 'java';
  /** The java process, for measuring it (kind 'java' only). */
  pid?: number;
  stop(): Promise<void>;
}

export type HapiStart = HapiBackend | { skip: string };

export interface StartHapiBackendOptions {
  env?: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
  /** Wait this long for /metadata after launch (default 180 s). */
  readyTimeoutMs?: number;
  /** Allowed time for a first build that downloads HAPI's dependencies (default 15 min). */
  buildTimeoutMs?: number;
  /** How long a Docker engine may take to answer before we assume there is none (default 5 s). */
  dockerProbeMs?: number;
  /** Progress lines (build started, server ready); default none. */
  log?: (line: string) => void;
  /**
   * A database for HAPI instead of in-memory H2 (e.g. PostgreSQL). Runs test/hapi's launcher with HAPI_JDBC_URL,
   * never HAPI_BASE_URL or Docker: their servers bring their own database.
   */
  database?: { jdbcUrl: string; user: string; password: string };
}

const capabilitySchema = z.object({ resourceType: z.literal('CapabilityStatement'), fhirVersion: z.string() });

export async function startHapiBackend(options: StartHapiBackendOptions = {}): Promise<HapiStart> {
  const env = options.env ?? process.env;
  if (options.database) {
    const { jdbcUrl, user, password } = options.database;
    if (!onPath('java', env)) return { skip: 'no java on PATH for the launcher in test/hapi' };
    const withDb = { ...env, HAPI_JDBC_URL: jdbcUrl, HAPI_JDBC_USER: user, HAPI_JDBC_PASSWORD: password };
    return startJavaHapi(withDb, options, 'HAPI on a given database runs on the launcher in test/hapi');
  }
  const external = env.HAPI_BASE_URL?.trim();
  if (external) {
    const baseUrl = external.replace(/\/+$/, '');
    // An explicit server that does not answer is an error, not a reason to skip.
    await waitForMetadata(baseUrl, { ...options, readyTimeoutMs: options.readyTimeoutMs ?? 10_000 });
    return { baseUrl, startupMs: 0, kind: 'external', stop: async () => {} };
  }
  const docker = await startDockerHapi(options);
  if ('baseUrl' in docker) return docker;
  if (!onPath('java', env)) return { skip: `${docker.skip}; and no java on PATH for the Docker-free launcher (test/hapi)` };
  return startJavaHapi(env, options, docker.skip);
}

async function startDockerHapi(options: StartHapiBackendOptions): Promise<HapiStart> {
  const { GenericContainer, Wait, getContainerRuntimeClient } = await import('testcontainers');
  // A DOCKER_HOST pointing at a dead TCP address can make the probe hang; bound it.
  const probe = await withTimeout(getContainerRuntimeClient(), options.dockerProbeMs ?? 5_000).then(
    () => undefined,
    (error: Error) => error.message.split('\n')[0],
  );
  if (probe !== undefined) return { skip: `no Docker engine reachable (${probe})` };
  const started = Date.now();
  const container = await new GenericContainer(HAPI_IMAGE)
    .withExposedPorts(8080)
    .withEnvironment({
      'hapi.fhir.fhir_version': 'R4',
      'spring.datasource.url': 'jdbc:h2:mem:hapi;DB_CLOSE_DELAY=-1',
      'hapi.fhir.reuse_cached_search_results_millis': '0',
    })
    .withWaitStrategy(Wait.forHttp('/fhir/metadata', 8080).forStatusCode(200))
    .withStartupTimeout(options.readyTimeoutMs ?? 180_000)
    .start();
  return {
    baseUrl: `http://${container.getHost()}:${container.getMappedPort(8080)}/fhir`,
    startupMs: Date.now() - started,
    kind: 'docker',
    stop: async () => void (await container.stop()),
  };
}

async function startJavaHapi(env: NodeJS.ProcessEnv, options: StartHapiBackendOptions, noDocker: string): Promise<HapiStart> {
  const built = await buildLauncher(env, options);
  if (built) return { skip: `${noDocker}; and ${built}` };
  const started = Date.now();
  // Port 0: the launcher binds a free port itself and prints it, so there is no pick-then-bind race.
  // HAPI_EXIT_ON_STDIN_EOF: the JVM exits when our end of its stdin closes, i.e. when this process dies, even by SIGKILL.
  // HAPI_JAVA_OPTS (as in run.sh): extra JVM flags after jvm.options, which tunes for start-up, not throughput.
  const extra = (env.HAPI_JAVA_OPTS ?? '').split(/\s+/).filter(Boolean);
  const child = spawn('java', [`@${join(HAPI_DIR, 'jvm.options')}`, ...extra, '-jar', join(HAPI_DIR, 'target/hapi-launcher.jar')], {
    env: { ...env, HAPI_PORT: '0', HAPI_HOST: '127.0.0.1', HAPI_EXIT_ON_STDIN_EOF: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const unhook = killOnExit(child, false);
  const output = tail(child);
  const stop = () => stopChild(child, unhook);
  try {
    const baseUrl = await readyLine(child, options.readyTimeoutMs ?? 180_000, output);
    await waitForMetadata(baseUrl, options);
    const startupMs = Date.now() - started;
    options.log?.(`hapi: ${baseUrl} ready in ${startupMs} ms (pid ${child.pid})`);
    return { baseUrl, startupMs, kind: 'java', pid: child.pid, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * run.sh owns the build rules (skip when the jar is newer than pom and sources; a lock for parallel callers).
 * Returns a skip reason when Maven is needed but missing; throws when the build fails or times out.
 */
async function buildLauncher(env: NodeJS.ProcessEnv, options: StartHapiBackendOptions): Promise<string | undefined> {
  const timeoutMs = options.buildTimeoutMs ?? 15 * 60_000;
  // Own process group, so a timeout or our exit ends Maven too, not just bash.
  const child = spawn('bash', [join(HAPI_DIR, 'run.sh'), '--build-only'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const unhook = killOnExit(child, true);
  const output = tail(child);
  child.stderr.on('data', (chunk: Buffer) => {
    if (chunk.toString().includes('hapi: building')) options.log?.('hapi: building test/hapi (first build downloads ~300 MB)');
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child, 'SIGKILL');
  }, timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  unhook();
  // run.sh exits 127 when a tool it needs (mvn, for a build) is not on PATH.
  if (code === 127) return output().trim().split('\n').pop();
  if (timedOut) throw new Error(`HAPI launcher build took over ${timeoutMs} ms:\n${output()}`);
  if (code !== 0) throw new Error(`HAPI launcher build failed (exit ${code}):\n${output()}`);
  return undefined;
}

function readyLine(child: ChildProcessWithoutNullStreams, timeoutMs: number, output: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => finish(new Error(`HAPI did not start within ${timeoutMs} ms:\n${output()}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const match = /^HAPI_READY (\S+)/m.exec(buffer);
      if (match) finish(undefined, match[1]);
    };
    const onExit = (code: number | null) => finish(new Error(`HAPI exited (code ${code}) before it was ready:\n${output()}`));
    function finish(error?: Error, url?: string) {
      clearTimeout(timer);
      child.stdout.off('data', onData);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(url as string);
    }
    child.stdout.on('data', onData);
    child.once('exit', onExit);
  });
}

async function waitForMetadata(baseUrl: string, options: StartHapiBackendOptions): Promise<void> {
  const fetchFn = options.fetch ?? fetch;
  const timeoutMs = options.readyTimeoutMs ?? 180_000;
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const response = await fetchFn(`${baseUrl}/metadata`, {
        headers: { accept: 'application/fhir+json' },
        signal: AbortSignal.timeout(10_000),
      });
      if (response.status === 200) {
        capabilitySchema.parse(await response.json());
        return;
      }
      last = `HTTP ${response.status}`;
      await response.body?.cancel();
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`${baseUrl}/metadata did not answer 200 within ${timeoutMs} ms (last: ${last})`);
}

async function stopChild(child: ChildProcessWithoutNullStreams, unhook: () => void): Promise<void> {
  unhook();
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdin.end();
  child.kill('SIGTERM');
  // The shutdown hook closes Jetty and Spring in ~1 s; never wait on it for long.
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Kills the child (or its process group) if this process exits first; returns the undo. */
function killOnExit(child: ChildProcess, group: boolean): () => void {
  const kill = () => (group ? killGroup(child, 'SIGKILL') : child.kill('SIGKILL'));
  process.once('exit', kill);
  return () => process.off('exit', kill);
}

/** Keeps the last lines of a child's output for error messages, and drains the pipes so it never blocks. */
function tail(child: { stdout: NodeJS.ReadableStream | null; stderr: NodeJS.ReadableStream | null }, max = 8_000): () => string {
  let text = '';
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString('utf8')).slice(-max);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => text;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function onPath(command: string, env: NodeJS.ProcessEnv): boolean {
  return (env.PATH ?? '').split(delimiter).some((dir) => dir && existsSync(join(dir, command)));
}
