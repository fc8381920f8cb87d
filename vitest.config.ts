import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'evals/**/*.test.ts', 'fixtures/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 180_000,
    // One HAPI FHIR server for test/hapi-*.test.ts (Docker, else test/hapi's Java launcher); FHIR_BACKENDS=embedded skips it.
    globalSetup: ['test/support/fhir-backends-setup.ts'],
    // 2-core machines: keep worker count small so loopback servers are not starved.
    maxWorkers: 2,
  },
});
