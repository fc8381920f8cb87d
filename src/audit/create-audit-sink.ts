// AUDIT_SINK → the sink: a file, the FHIR server the gateway uses (through its raw, unaudited client), or none.
import { ConfigError, type Config } from '../config.ts';
import type { FhirClient } from '../fhir/fhir-client.ts';
import type { AuditSink } from './audit-trail.ts';
import { createFhirAuditSink } from './fhir-audit-sink.ts';
import { createFileAuditSink } from './file-audit-sink.ts';

export async function createAuditSink(
  config: Pick<Config, 'auditSink' | 'AUDIT_FILE' | 'AUDIT_FILE_MAX_BYTES'>,
  fhir: FhirClient,
): Promise<AuditSink | undefined> {
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
