// The header's provenance as short lines for a report: enough to rebuild the run and to see what it ran on.
import type { HeaderRecord } from '../eval-log.ts';

export function provenanceLines(h: HeaderRecord): string[] {
  const p = h.provenance;
  if (!p) return ['provenance: not recorded (log written before provenance was)'];
  const short = (sha: string | null) => (sha ? sha.slice(0, 12) : '–');
  const options = Object.entries(p.options)
    .filter(([k, v]) => v !== null && v !== false && k !== 'apiKey' && k !== 'fhirAuthHeader')
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  const ehr = p.ehr;
  const software = ehr.software?.name ? ` ${ehr.software.name}${ehr.software.version ? ` ${ehr.software.version}` : ''}` : '';
  return [
    `command: ${p.argv.join(' ')}`,
    `options: ${options}`,
    `seed: ${p.seed ?? 'not set'}; protocol: ${p.protocol}; system prompt sha256 ${short(p.systemPromptSha256)}; tools sha256 ${short(p.toolsSha256)}`,
    `runtime: Node ${p.node}; ${p.package.name} ${p.package.version}; ${Object.entries(p.dependencies)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `EHR: ${ehr.kind}${ehr.baseUrl ? ` ${ehr.baseUrl}` : ''}${software}${ehr.fhirVersion ? ` (FHIR ${ehr.fhirVersion})` : ''}${ehr.sha256 ? `; sha256 ${short(ehr.sha256)}` : ''}`,
  ];
}
