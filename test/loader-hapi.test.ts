// The loader contract against HAPI FHIR in a container. Skips, saying why, when no Docker engine is reachable.
import { createMedplumFhirClient } from '../src/fhir/medplum-fhir-client.ts';
import { describeLoaderContract } from './support/loader-contract.ts';

const HAPI_IMAGE = process.env.HAPI_IMAGE ?? 'hapiproject/hapi:v8.8.0-1';

describeLoaderContract('hapi', async () => {
  const { GenericContainer, Wait, getContainerRuntimeClient } = await import('testcontainers');
  try {
    await getContainerRuntimeClient();
  } catch (error) {
    return { skip: `no Docker engine reachable (${(error as Error).message.split('\n')[0]})` };
  }
  const container = await new GenericContainer(HAPI_IMAGE)
    .withExposedPorts(8080)
    .withEnvironment({
      'hapi.fhir.fhir_version': 'R4',
      'spring.datasource.url': 'jdbc:h2:mem:hapi;DB_CLOSE_DELAY=-1',
      'hapi.fhir.reuse_cached_search_results_millis': '0',
    })
    .withWaitStrategy(Wait.forHttp('/fhir/metadata', 8080).forStatusCode(200))
    .withStartupTimeout(180_000)
    .start();
  const baseUrl = `http://${container.getHost()}:${container.getMappedPort(8080)}/fhir`;
  return {
    client: createMedplumFhirClient({ baseUrl, timeoutMs: 120_000, retries: 1 }),
    close: async () => void (await container.stop()),
  };
});
