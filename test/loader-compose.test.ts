// docker-compose.yml cannot run here (no Docker engine), so check that it parses and is wired as documented.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const root = new URL('../', import.meta.url);
const compose = parse(readFileSync(new URL('docker-compose.yml', root), 'utf8')) as {
  services: Record<string, Record<string, any>>;
};
const { hapi, 'hapi-health': health, loader, gateway, postgres } = compose.services;

describe('docker-compose.yml', () => {
  it('runs HAPI FHIR R4 from a pinned v8 image with a /fhir/metadata healthcheck', () => {
    expect(hapi.image).toMatch(/^hapiproject\/hapi:v8\.\d+\.\d+(-\d+)?$/);
    expect(hapi.environment['hapi.fhir.fhir_version']).toBe('R4');
    // The distroless HAPI image has no shell or curl; the probe runs in a sidecar on HAPI's network namespace.
    expect(health.network_mode).toBe('service:hapi');
    expect(health.healthcheck.test.join(' ')).toContain('http://127.0.0.1:8080/fhir/metadata');
  });

  it('keeps HAPI on a PostgreSQL service (issue 14) that is healthy before HAPI starts', () => {
    expect(postgres.image).toMatch(/^postgres:\d+/);
    const env = hapi.environment;
    expect(env['spring.datasource.url']).toBe(`jdbc:postgresql://postgres:5432/${postgres.environment.POSTGRES_DB}`);
    expect(env['spring.datasource.username']).toBe(postgres.environment.POSTGRES_USER);
    expect(env['spring.datasource.password']).toBe(postgres.environment.POSTGRES_PASSWORD);
    expect(env['spring.jpa.properties.hibernate.dialect']).toBe('ca.uhn.fhir.jpa.model.dialect.HapiFhirPostgresDialect');
    expect(hapi.depends_on.postgres.condition).toBe('service_healthy');
    expect(postgres.healthcheck.test).toContain('pg_isready');
    // Data on a named volume, and the database never published to the host.
    expect(postgres.volumes[0]).toMatch(/^hapi-postgres:\/var\/lib\/postgresql\/data$/);
    expect(compose).toHaveProperty('volumes.hapi-postgres');
    expect(postgres.ports).toBeUndefined();
  });

  it('loads the synthetic EHR into HAPI once it is healthy', () => {
    expect(loader.depends_on['hapi-health'].condition).toBe('service_healthy');
    expect(loader.build.dockerfile).toBe('docker/gateway.Dockerfile');
    const command = loader.command.join(' ');
    expect(command).toMatch(/^npm run load -- /);
    expect(command).toContain('--fhir-base-url http://hapi:8080/fhir');
    expect(command).toMatch(/--wait \d+/);
    // The runtime image has only dist/ (fixtures are copied there by the build).
    expect(loader.command.at(-1)).toBe('dist/fixtures/synthetic-ehr');
    expect(loader.restart).toBe('no');
  });

  it('starts the gateway against HAPI after the load, listening publicly only with API keys', () => {
    expect(gateway.depends_on.loader.condition).toBe('service_completed_successfully');
    expect(gateway.environment).toMatchObject({ FHIR_BASE_URL: 'http://hapi:8080/fhir', HOST: '0.0.0.0' });
    expect(gateway.environment.API_KEYS).toMatch(/^\$\{API_KEYS:\?.+\}$/);
    expect(gateway.ports[0]).toMatch(/:8080$/);
    expect(gateway.image).toBe(loader.image);
  });

  it('builds in two stages that install with npm ci and run the compiled server', () => {
    const dockerfile = readFileSync(new URL('docker/gateway.Dockerfile', root), 'utf8');
    expect(dockerfile.match(/^FROM node:20\S* ?(AS build)?$/gm)).toHaveLength(2);
    // The runtime stage installs only production dependencies; test/dockerfile-steps.test.ts runs these RUN lines.
    expect(dockerfile).toMatch(/^RUN (--mount=\S+ )?npm ci --omit=dev\b/m);
    expect(dockerfile).toMatch(/^COPY --from=build \/app\/dist \.\/dist$/m);
    expect(dockerfile).toMatch(/^CMD \["node", "dist\/src\/composition\/server\.js"\]/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^COPY package\.json package-lock\.json/m);
    expect(readFileSync(new URL('docker/gateway.Dockerfile.dockerignore', root), 'utf8')).toMatch(/^node_modules$/m);
    expect(existsSync(new URL('package-lock.json', root))).toBe(true);
  });
});
