// A real HAPI FHIR R4 server for tests: HAPI_BASE_URL if set, else the hapiproject/hapi image when a Docker
// engine answers, else the Docker-free launcher in test/hapi (Java 17 + Maven), else a reason to skip.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

export const HAPI_IMAGE = 'hapiproject/hapi:v8.8.0-1';

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

export interface StartHapiBackendOptions {
  env?: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
  /** Wait this long for /metadata after launch (default 180 s). */
  readyTimeoutMs?: number;
  /** Allowed time for a first build that downloads HAPI's dependencies (default 15 min). */
  buildTimeoutMs?: number;
  now?: () => number;
}

const capabilitySchema = z.object({ resourceType: z.literal('CapabilityStatement'), fhirVersion: z.string() });

export async function startHapiBackend(
  options: StartHapiBackendOptions = {},
): Promise<HapiBackend | { skip: string }> {
  const env = options.env ?? process.env;
  const external = env.HAPI_BASE_URL?.trim();
  if (external) {
    const baseUrl = external.replace(/\/+$/, '');
    // An explicit server that does not answer is an error, not a reason to skip.
    await waitForMetadata(baseUrl, { ...options, readyTimeoutMs: options.readyTimeoutMs ?? 10_000 });
    return { baseUrl, startupMs: 0, kind: 'external', stop: async () => {} };
  }
  const docker = await startDockerHapi(options);
  if ('baseUrl' in docker) return docker;
  const missing = ['java', 'mvn'].filter((cmd) => !onPath(cmd, env));
  if (missing.length > 0) {
    return { skip: `${docker.skip}; and no ${missing.join(' or ')} on PATH for the Docker-free launcher` };
  }
  return startJavaHapi(env, options);
}

async function startDockerHapi(options: StartHapiBackendOptions): Promise<HapiBackend | { skip: string }> {
  const { GenericContainer, Wait, getContainerRuntimeClient } = await import('testcontainers');
  try {
    await getContainerRuntimeClient();
  } catch (error) {
    return { skip: `no Docker engine reachable (${(error as Error).message.split('\n')[0]})` };
  }
  const now = options.now ?? Date.now;
  const started = now();
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
    startupMs: now() - started,
    kind: 'docker',
    stop: async () => void (await container.stop()),
  };
}

async function startJavaHapi(env: NodeJS.ProcessEnv, options: StartHapiBackendOptions): Promise<HapiBackend> {
  await buildLauncher(env, options.buildTimeoutMs ?? 15 * 60_000);
  const now = options.now ?? Date.now;
  const started = now();
  // Port 0: the launcher binds a free port itself and prints it, so there is no pick-then-bind race.
  const child = spawn('java', [`@${join(HAPI_DIR, 'jvm.options')}`, '-jar', join(HAPI_DIR, 'target/hapi-launcher.jar')], {
    env: { ...env, HAPI_PORT: '0', HAPI_HOST: '127.0.0.1', HAPI_EXIT_ON_STDIN_EOF: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // Belt and braces: stdin EOF ends the JVM if this process dies hard; this covers a normal exit.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = () => stopChild(child, killOnExit);
  const output = tail(child);
  try {
    const baseUrl = await readyLine(child, options.readyTimeoutMs ?? 180_000, output);
    await waitForMetadata(baseUrl, options);
    return { baseUrl, startupMs: now() - started, kind: 'java', pid: child.pid, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** run.sh owns the build rules (skip when the jar is newer than pom and sources; a lock for parallel callers). */
async function buildLauncher(env: NodeJS.ProcessEnv, timeoutMs: number): Promise<void> {
  const child = spawn('bash', [join(HAPI_DIR, 'run.sh'), '--build-only'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = tail(child);
  const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`HAPI launcher build failed (exit ${code}):\n${output()}`);
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

async function stopChild(child: ChildProcessWithoutNullStreams, killOnExit: () => void): Promise<void> {
  process.off('exit', killOnExit);
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdin.end();
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Keeps the last lines of a child's output for error messages, and drains the pipes so it never blocks. */
function tail(child: { stdout: NodeJS.ReadableStream; stderr: NodeJS.ReadableStream }, max = 8_000): () => string {
  let text = '';
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString('utf8')).slice(-max);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  return () => text;
}

function onPath(command: string, env: NodeJS.ProcessEnv): boolean {
  return (env.PATH ?? '').split(delimiter).some((dir) => dir && existsSync(join(dir, command)));
}
