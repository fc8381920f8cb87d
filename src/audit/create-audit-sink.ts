// AUDIT_SINK → the sink: a file, the FHIR server the gateway uses (through its raw, unaudited client), or none.
import type { FhirClient } from '../fhir-client/fhir-client.ts';
import { ConfigError } from '../shared/config-error.ts';
import type { AuditSink } from './audit-trail.ts';
import { createFhirAuditSink } from './fhir-audit-sink.ts';
import { createFileAuditSink } from './file-audit-sink.ts';

/** The audit settings, as src/config.ts resolves them. */
export interface AuditSinkConfig {
  /** AUDIT_SINK, resolved: off without keys. */
  auditSink: 'file' | 'fhir' | 'off';
  AUDIT_FILE: string;
  AUDIT_FILE_MAX_BYTES: number;
}

export async function createAuditSink(config: AuditSinkConfig, fhir: FhirClient): Promise<AuditSink | undefined> {
  switch (config.auditSink) {
    case 'file':
      // Refused at boot, in one line, rather than on the first request.
      return createFileAuditSink({ path: config.AUDIT_FILE, maxBytes: config.AUDIT_FILE_MAX_BYTES }).catch((err: NodeJS.ErrnoException) => {
        throw new ConfigError(
          `invalid AUDIT_FILE=${JSON.stringify(config.AUDIT_FILE)}: cannot open it for appending (${err.code ?? err.message})`,
        );
      });
    case 'fhir':
      return createFhirAuditSink(fhir);
    case 'off':
      return undefined;
  }
}
