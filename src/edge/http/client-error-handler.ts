// Requests Node's HTTP parser refuses before fastify sees them (a 20 KB Authorization header, a malformed header
// line, a request that never finishes) get a JSON body in the envelope of their route family, like every other
// refusal: an OperationOutcome under /fhir, the OpenAI error envelope everywhere else. Used as fastify's
// `clientErrorHandler` option, so it writes the raw HTTP/1.1 response itself and closes the connection.
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { badRequest, serverTimeout } from '@medplum/core';
import type { OperationOutcome } from '@medplum/fhirtypes';
import type { FastifyInstance } from 'fastify';
import { withDiagnostics } from '../../vocabulary/fhir/with-diagnostics.ts';
import { ApiError } from '../../vocabulary/openai/api-error.ts';

interface ClientError extends Error {
  code?: string;
  /**
   * The bytes the parser was given when it failed: Node sets a Buffer for parse errors (fastify's types say
   * otherwise), so it is checked before use.
   */
  rawPacket?: unknown;
}

interface Refusal {
  status: number;
  code: string;
  message: string;
  outcome: (message: string) => OperationOutcome;
}

const REFUSALS: Record<string, Refusal> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: 'request_headers_too_large',
    message: 'The request headers are too large; send a shorter Authorization header or fewer headers.',
    outcome: badRequest,
  },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'timeout', message: 'The request was not received in time.', outcome: serverTimeout },
};
const MALFORMED: Refusal = { status: 400, code: 'invalid_request', message: 'The HTTP request is malformed.', outcome: badRequest };

/**
 * Whether the request line in the failing packet targets /fhir. Best effort: when the parser failed in a later
 * packet than the request line's, or on a timeout (Node gives no packet then), the path is unknown and the OpenAI
 * envelope, the default family, is used.
 */
function isFhirRequest(packet: unknown): boolean {
  if (!Buffer.isBuffer(packet)) return false;
  const line = packet.subarray(0, 8192).toString('latin1').split('\r\n', 1)[0]!;
  const target = /^[A-Z]+ (\S+) HTTP\/\d\.\d$/.exec(line)?.[1];
  if (target === undefined) return false;
  try {
    // The path as fastify's router reads it: percent escapes decoded (`/%66hir` is /fhir too), dot segments kept.
    const path = decodeURIComponent(target.split(/[?#]/, 1)[0]!);
    return path === '/fhir' || path.startsWith('/fhir/');
  } catch {
    return false;
  }
}

export function clientErrorHandler(this: FastifyInstance, err: ClientError, socket: Duplex): void {
  // A reset connection has nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const refusal = REFUSALS[err.code ?? ''] ?? MALFORMED;
  this.log.warn({ status: refusal.status, code: err.code }, 'request rejected by the HTTP parser');
  // A response to an earlier request on this connection may be in flight (pipelining): writing ours would corrupt
  // it, so that connection only closes. Node's own default handler makes the same check.
  if (!socket.writable || (socket as Duplex & { _httpMessage?: unknown })._httpMessage) {
    socket.destroy();
    return;
  }
  const fhir = isFhirRequest(err.rawPacket);
  const body = JSON.stringify(
    fhir
      ? withDiagnostics(refusal.outcome(refusal.message), refusal.message)
      : new ApiError(refusal.status, refusal.message, { code: refusal.code }).toEnvelope(),
  );
  socket.end(
    [
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}`,
      `Content-Type: ${fhir ? 'application/fhir+json' : 'application/json'}; charset=utf-8`,
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}
