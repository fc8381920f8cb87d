// AUDIT_SINK → the sink: a file, the FHIR server the gateway uses (through its raw, unaudited client), or none.
import type { FhirClient } from '../../fhir/client/fhir-client.ts';
import { ConfigError } from '../../shared/config-error.ts';
import type { AuditSink } from './audit-trail.ts';
import { createFhirAuditSink } from './fhir-audit-sink.ts';
import { createFileAuditSink } from './file-audit-sink.ts';

/** The audit settings, as src/composition/config.ts resolves them. */
export interface AuditSinkConfig {
  /** AUDIT_SINK, resolved: off without keys. */
  auditSink: 'file' | 'fhir' | 'off';
  AUDIT_FILE: string;
  AUDIT_FILE_MAX_BYTES: number;
  AUDIT_FILE_MAX_TOTAL_BYTES: number;
  AUDIT_FILE_DELETE_OLDEST: boolean;
}

/** `onDeleted`: a rotated audit file was deleted to stay within AUDIT_FILE_MAX_TOTAL_BYTES (the caller logs it). */
export async function createAuditSink(
  config: AuditSinkConfig,
  fhir: FhirClient,
  onDeleted?: (file: string, bytes: number) => void,
): Promise<AuditSink | undefined> {
  switch (config.auditSink) {
    case 'file':
      // Refused at boot, in one line, rather than on the first request.
      return createFileAuditSink({
        path: config.AUDIT_FILE,
        maxBytes: config.AUDIT_FILE_MAX_BYTES,
        maxTotalBytes: config.AUDIT_FILE_MAX_TOTAL_BYTES,
        deleteOldest: config.AUDIT_FILE_DELETE_OLDEST,
        onDeleted,
      }).catch((err: NodeJS.ErrnoException) => {
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
