// GET /metadata: what this server does, derived from the same search parameter registry the search uses.
import { globalSchema, isResourceType } from '@medplum/core';
import type { CapabilityStatement, CapabilityStatementRestResource } from '@medplum/fhirtypes';

let resources: CapabilityStatementRestResource[] | undefined;

function restResources(): CapabilityStatementRestResource[] {
  resources ??= Object.keys(globalSchema.types)
    .filter((type) => isResourceType(type) && globalSchema.types[type].searchParams)
    .sort()
    .map((type) => ({
      type: type as CapabilityStatementRestResource['type'],
      interaction: (['read', 'vread', 'update', 'delete', 'create', 'search-type'] as const).map((code) => ({ code })),
      conditionalCreate: true,
      searchParam: Object.values(globalSchema.types[type].searchParams ?? {})
        .filter((p) => p.type !== 'composite' && p.type !== 'special')
        .map((p) => ({ name: p.code as string, type: p.type })),
    }));
  return resources;
}

export function buildCapabilityStatement(baseUrl: string, now: Date): CapabilityStatement {
  return {
    resourceType: 'CapabilityStatement',
    status: 'active',
    date: now.toISOString(),
    kind: 'instance',
    software: { name: 'fhir-agent-gateway embedded FHIR server' },
    implementation: { description: 'In-memory FHIR R4 server (synthetic data only)', url: baseUrl },
    fhirVersion: '4.0.1',
    format: ['application/fhir+json', 'json'],
    rest: [
      {
        mode: 'server',
        resource: restResources(),
        interaction: [{ code: 'transaction' }, { code: 'batch' }],
      },
    ],
  };
}
