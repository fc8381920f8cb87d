// Fails fast when the gateway's port is taken, before the slow part of boot (seeding the embedded FHIR server,
// loading a model) rather than after it. The port may still be taken between this check and listen(); that
// listen() error maps to the same PortInUseError. The probe holds the port for an instant, so a client polling the
// bare TCP port can see it open once and then refused until the real listen: wait on GET /health, not on the port.
import { createServer } from 'node:net';

export class PortInUseError extends Error {
  override name = 'PortInUseError';
  constructor(
    readonly host: string,
    readonly port: number,
    readonly code: string,
  ) {
    super(
      code === 'EACCES'
        ? `port ${port} on ${host} needs privileges this process lacks (EACCES): choose a PORT above 1023`
        : `port ${port} on ${host} is already in use (${code}): stop the other server or choose another PORT`,
    );
  }
}

/** Rejects with PortInUseError when host:port cannot be bound; PORT 0 (any free port) always can. */
export async function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (err: NodeJS.ErrnoException) => reject(toPortError(err, host, port)));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/** listen()'s own EADDRINUSE / EACCES as a PortInUseError; anything else unchanged. */
export function toPortError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === 'EADDRINUSE' || code === 'EACCES' ? new PortInUseError(host, port, code) : err;
}
