// A tiny FHIR server on loopback for FHIR_BASE_URL, with faults: an OperationOutcome 500, a reset before any
// header, a stall (headers never sent), garbage in place of JSON, or a fine searchset. It records every request.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FhirFault = 'ok' | '500' | 'reset' | 'stall' | 'garbage';

export interface FakeFhirServer {
  /** Ends in /fhir. */
  baseUrl: string;
  requests: Array<{ method: string; url: string }>;
  /** What every request gets from now on. */
  setFault(fault: FhirFault): void;
  /** Requests whose connection closed before an answer (a client that gave up). */
  abandoned(): number;
  close(): Promise<void>;
}

const FHIR_JSON = { 'content-type': 'application/fhir+json; charset=utf-8' };

function searchset(url: string): unknown {
  return {
    resourceType: 'Bundle',
    type: 'searchset',
    total: 1,
    entry: [
      {
        fullUrl: `${url}/Observation/k1`,
        resource: {
          resourceType: 'Observation',
          id: 'k1',
          status: 'final',
          code: { coding: [{ system: 'http://loinc.org', code: '2823-3', display: 'Potassium' }] },
          subject: { reference: 'Patient/S1' },
          effectiveDateTime: '2024-04-30T08:00:00Z',
          valueQuantity: { value: 5.9, unit: 'mmol/L' },
        },
        search: { mode: 'match' },
      },
    ],
  };
}

export async function startFakeFhirServer(): Promise<FakeFhirServer> {
  let fault: FhirFault = 'ok';
  let abandoned = 0;
  const requests: FakeFhirServer['requests'] = [];
  const server = createServer((req, res: ServerResponse) => {
    requests.push({ method: req.method ?? 'GET', url: req.url ?? '/' });
    res.once('close', () => {
      if (!res.writableFinished) abandoned++;
    });
    switch (fault) {
      case 'reset':
        req.socket.destroy();
        return;
      case 'stall':
        return; // the client's timeout or abort is the only way out
      case '500':
        res.writeHead(500, FHIR_JSON).end(
          JSON.stringify({
            resourceType: 'OperationOutcome',
            issue: [{ severity: 'error', code: 'exception', diagnostics: 'database on fire' }],
          }),
        );
        return;
      case 'garbage':
        res.writeHead(200, FHIR_JSON).end('<html>502 Bad Gateway</html>{{');
        return;
      case 'ok':
        res.writeHead(200, FHIR_JSON).end(JSON.stringify(searchset(`http://${req.headers.host}/fhir`)));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/fhir`,
    requests,
    setFault: (f) => (fault = f),
    abandoned: () => abandoned,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
