// A throwaway PostgreSQL cluster from the machine's own packages (Debian: /usr/lib/postgresql/<major>/bin):
// initdb into a temp dir, pg_ctl on a free loopback port with its unix socket in the same dir, stopped and
// deleted by stop(). PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres` user
// (created by Debian's package) or, failing that, as `nobody`. No binaries: a reason to skip.
import { execFile, type ExecFileOptions } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort } from './free-port.ts';

export interface PostgresCluster {
  /** e.g. jdbc:postgresql://127.0.0.1:41234/hapi */
  jdbcUrl: string;
  user: string;
  password: string;
  port: number;
  database: string;
  /** The cluster's data directory (postmaster.pid names the server's pid). */
  dataDir: string;
  /** Runs one SQL statement with psql and returns its unaligned, tuples-only output. */
  query(sql: string): Promise<string>;
  stop(): Promise<void>;
}

export type PostgresStart = PostgresCluster | { skip: string };

export interface StartPostgresOptions {
  /** Database created for the caller (default "app"). */
  database?: string;
  env?: NodeJS.ProcessEnv;
}

const DEBIAN_BIN_ROOT = '/usr/lib/postgresql';
const USER = 'app';
// Loopback only, in a temp cluster that lives for one test run; a password still, as a real deployment would.
const PASSWORD = 'throwaway-test-password';

export async function startPostgresCluster(options: StartPostgresOptions = {}): Promise<PostgresStart> {
  const env = options.env ?? process.env;
  const bin = findBinDir(env);
  if (!bin) return { skip: `no PostgreSQL server binaries (initdb, pg_ctl) in ${DEBIAN_BIN_ROOT}/*/bin or on PATH` };
  const owner = clusterOwner();
  if ('skip' in owner) return owner;

  const dir = await mkdtemp(join(tmpdir(), 'pg-cluster-'));
  const data = join(dir, 'data');
  const database = options.database ?? 'app';
  const run = (tool: string, args: string[], extra: ExecFileOptions = {}) =>
    exec(join(bin, tool), args, { cwd: dir, uid: owner.uid, gid: owner.gid, env: { PATH: env.PATH ?? '', LANG: 'C.UTF-8' }, ...extra });
  let started = false;
  const stop = async () => {
    if (started) await run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    started = false;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    if (owner.uid !== undefined) {
      await chown(dir, owner.uid, owner.gid!);
      await chmod(dir, 0o700);
    }
    // Trust over the unix socket (only the owner can reach it, in a 0700 dir); scram over TCP, for JDBC.
    const pwfile = join(dir, 'pwfile');
    await writeFile(pwfile, `${PASSWORD}\n`, { mode: 0o600 });
    if (owner.uid !== undefined) await chown(pwfile, owner.uid, owner.gid!);
    await run('initdb', ['-D', data, '-U', USER, '--pwfile', pwfile, '-E', 'UTF8', '--auth-local=trust', '--auth-host=scram-sha-256']);
    let port = 0;
    // A free port can be taken between the probe and pg_ctl: try a few.
    for (let attempt = 0; ; attempt++) {
      port = await freePort();
      const settings = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${dir} -c fsync=off -c shared_buffers=32MB`;
      try {
        await run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', settings, '-w', '-t', '60', 'start']);
        started = true;
        break;
      } catch (error) {
        if (attempt >= 2) throw new Error(`pg_ctl start failed: ${(error as Error).message}\n${readLog(dir)}`, { cause: error });
      }
    }
    const psql = (sql: string, db = 'postgres') =>
      run('psql', ['-h', dir, '-p', String(port), '-U', USER, '-d', db, '-v', 'ON_ERROR_STOP=1', '-X', '-A', '-t', '-c', sql]).then((r) =>
        r.stdout.trim(),
      );
    await psql(`CREATE DATABASE "${database}"`);
    return {
      jdbcUrl: `jdbc:postgresql://127.0.0.1:${port}/${database}`,
      user: USER,
      password: PASSWORD,
      port,
      database,
      dataDir: data,
      query: (sql) => psql(sql, database),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function findBinDir(env: NodeJS.ProcessEnv): string | undefined {
  const has = (dir: string) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')) && existsSync(join(dir, 'psql'));
  if (existsSync(DEBIAN_BIN_ROOT)) {
    // Newest major first.
    const majors = readdirSync(DEBIAN_BIN_ROOT)
      .filter((d) => /^\d+$/.test(d))
      .sort((a, b) => Number(b) - Number(a));
    for (const major of majors) if (has(join(DEBIAN_BIN_ROOT, major, 'bin'))) return join(DEBIAN_BIN_ROOT, major, 'bin');
  }
  return (env.PATH ?? '').split(delimiter).find((dir) => dir && has(dir));
}

/** undefined uid: run as ourselves (not root). As root: the postgres user, else nobody. */
function clusterOwner(): { uid?: number; gid?: number } | { skip: string } {
  if (process.getuid?.() !== 0) return {};
  const passwd = readFileSync('/etc/passwd', 'utf8').split('\n');
  for (const name of ['postgres', 'nobody']) {
    const fields = passwd.find((line) => line.startsWith(`${name}:`))?.split(':');
    if (fields) return { uid: Number(fields[2]), gid: Number(fields[3]) };
  }
  return { skip: 'running as root and neither a postgres nor a nobody user exists (PostgreSQL refuses to run as root)' };
}

function exec(file: string, args: string[], options: ExecFileOptions): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { ...options, encoding: 'utf8', timeout: 120_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${file.split('/').pop()} ${args[0] ?? ''}: ${String(stderr).trim() || error.message}`));
      else resolve({ stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

function readLog(dir: string): string {
  try {
    return readFileSync(join(dir, 'server.log'), 'utf8').slice(-2_000);
  } catch {
    return '';
  }
}
