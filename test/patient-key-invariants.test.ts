// The patient-key data invariant (test/support/patient-key-invariants.ts) on the embedded FHIR server seeded with
// the synthetic EHR; test/hapi-contract.test.ts runs the same generated calls against HAPI.
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { describePatientKeyInvariants } from './support/patient-key-invariants.ts';

describePatientKeyInvariants('embedded', async () => ({
  env: { FHIR_SEED: 'true' },
  admin: (gw) => createMedplumFhirClient({ baseUrl: gw.fhirServer!.baseUrl, fetch: gw.fhirServer!.fetch, retries: 0 }),
}));
