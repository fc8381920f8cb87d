// Where AuditEvents go, and the one way code records one. Recording never fails the request it describes: a
// record that cannot be written is logged as an error (without the record's contents) and the answer goes out.
import type { AuditEvent } from '@medplum/fhirtypes';
import { buildAuditEvent, fitAuditEvent, type AuditFacts } from './audit-event.ts';

export interface AuditSink {
  /** Resolves once the record is durable (file: written and fsynced; fhir: created on the server). */
  write(event: AuditEvent): Promise<void>;
  close(): Promise<void>;
}

export interface AuditTrail {
  /**
   * Never rejects. Resolves to the record's size in bytes (0 when none was written). With `maxBytes` the record is
   * cut to that size: the resources it lists past it are counted instead.
   */
  record(facts: AuditFacts, options?: { maxBytes?: number }): Promise<number>;
}

export interface AuditTrailOptions {
  sink: AuditSink;
  now?: () => Date;
  onError: (err: Error, facts: Pick<AuditFacts, 'subtype' | 'callerId'>) => void;
  /** Each record's key and size, once written (the per-key audit budget). */
  onWritten?: (callerId: string, bytes: number) => void;
}

export function createAuditTrail({ sink, now = () => new Date(), onError, onWritten }: AuditTrailOptions): AuditTrail {
  return {
    async record(facts, options) {
      try {
        const event = options?.maxBytes === undefined ? buildAuditEvent(facts, now()) : fitAuditEvent(facts, now(), options.maxBytes);
        const bytes = Buffer.byteLength(JSON.stringify(event)) + 1;
        await sink.write(event);
        onWritten?.(facts.callerId, bytes);
        return bytes;
      } catch (err) {
        onError(err instanceof Error ? err : new Error(String(err)), { subtype: facts.subtype, callerId: facts.callerId });
        return 0;
      }
    },
  };
}

/** AUDIT_SINK=off, and the anonymous loopback sandbox. */
export const noAuditTrail: AuditTrail = { record: async () => 0 };
