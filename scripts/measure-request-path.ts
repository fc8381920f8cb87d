// The files one chat request with one tool call runs (docs/architecture.md, "One chat request with one tool call"):
// a real gateway on loopback, a fake remote model that asks for find_patients once and then answers, the embedded
// FHIR server, the default configuration with keys. V8's precise coverage is reset after a warm-up request, so the
// count is what one request runs, not what booting loaded. `npx tsx scripts/measure-request-path.ts`
import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { script } from '../test/support/agent-kit.ts';
import { startGateway } from '../test/support/gateway-harness.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const gw = await startGateway({ env: { SERVER_TOOLS: 'true', FHIR_SEED: 'true', LOG_LEVEL: 'info' } });
const ask = async () => {
  script(gw, [
    { toolCalls: [{ id: 'fp', name: 'find_patients', args: { family: 'Iwasaki', given: 'Farrah' } }] },
    { content: 'Farrah N Iwasaki has MRN S1000002.' },
  ]);
  const res = await gw.client.chat.completions.create({ model: gw.model, messages: [{ role: 'user', content: 'MRN of Farrah Iwasaki?' }] });
  if (!res.choices[0]?.message.content?.includes('S1000002')) throw new Error('the scripted request did not answer');
};
await ask();
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
await ask();
const { result } = await session.post('Profiler.takePreciseCoverage');
await session.post('Profiler.stopPreciseCoverage');
const files = result
  .filter((s) => s.url.startsWith('file://') && s.functions.some((f) => f.ranges.some((r) => r.count > 0)))
  .map((s) => path.relative(ROOT, fileURLToPath(s.url)))
  .filter((f) => /^(src|tools)\//.test(f))
  .sort();
const folders = [...new Set(files.map((f) => path.dirname(f)))];
// Folder crossings: the distinct (folder → other folder) import edges between the files that ran.
const ran = new Set(files);
const crossings = new Set<string>();
for (const file of files) {
  for (const [, spec] of readFileSync(path.join(ROOT, file), 'utf8').matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
    const target = path.normalize(path.join(path.dirname(file), spec!));
    if (ran.has(target) && path.dirname(target) !== path.dirname(file)) crossings.add(`${path.dirname(file)} → ${path.dirname(target)}`);
  }
}
console.log(files.join('\n'));
console.log(`${files.length} project files in ${folders.length} folders, ${crossings.size} folder crossings: ${folders.join(' ')}`);
await gw.close();
