// Where AuditEvents go, and the one way code records one. Recording never fails the request it describes: a
// record that cannot be written is logged as an error (without the record's contents) and the answer goes out.
import type { AuditEvent } from '@medplum/fhirtypes';
import { buildAuditEvent, type AuditFacts } from './audit-event.ts';

export interface AuditSink {
  /** Resolves once the record is durable (file: written and fsynced; fhir: created on the server). */
  write(event: AuditEvent): Promise<void>;
  close(): Promise<void>;
}

export interface AuditTrail {
  /** Never rejects. */
  record(facts: AuditFacts): Promise<void>;
}

export interface AuditTrailOptions {
  sink: AuditSink;
  now?: () => Date;
  onError: (err: Error, facts: Pick<AuditFacts, 'subtype' | 'keyId'>) => void;
}

export function createAuditTrail({ sink, now = () => new Date(), onError }: AuditTrailOptions): AuditTrail {
  return {
    async record(facts) {
      try {
        await sink.write(buildAuditEvent(facts, now()));
      } catch (err) {
        onError(err instanceof Error ? err : new Error(String(err)), { subtype: facts.subtype, keyId: facts.keyId });
      }
    },
  };
}

/** AUDIT_SINK=off, and the anonymous loopback sandbox. */
export const noAuditTrail: AuditTrail = { record: async () => {} };
