// GET /metadata: what this server does, derived from the same search parameter registry the search uses.
import { globalSchema } from '@medplum/core';
import { isFhirResourceType } from '../../vocabulary/fhir/fhir-definitions.ts';
import type { CapabilityStatement, CapabilityStatementRestResource } from '@medplum/fhirtypes';

let resources: CapabilityStatementRestResource[] | undefined;

const searchParamsOf = (type: string) => Object.values(globalSchema.types[type].searchParams ?? {});

function restResources(): CapabilityStatementRestResource[] {
  if (resources) return resources;
  const types = Object.keys(globalSchema.types)
    .filter((type) => isFhirResourceType(type) && globalSchema.types[type].searchParams)
    .sort();
  // Every reference parameter can be included from its type and rev-included into each type it may point at.
  const revIncludes = new Map<string, string[]>();
  for (const source of types) {
    for (const p of searchParamsOf(source)) {
      if (p.type !== 'reference') continue;
      for (const target of p.target ?? []) revIncludes.set(target, [...(revIncludes.get(target) ?? []), `${source}:${p.code}`]);
    }
  }
  resources = types.map((type) => ({
    type: type as CapabilityStatementRestResource['type'],
    interaction: (['read', 'vread', 'update', 'delete', 'create', 'search-type'] as const).map((code) => ({ code })),
    conditionalCreate: true,
    searchInclude: searchParamsOf(type)
      .filter((p) => p.type === 'reference')
      .map((p) => `${type}:${p.code}`),
    searchRevInclude: revIncludes.get(type) ?? [],
    searchParam: searchParamsOf(type)
      .filter((p) => p.type !== 'composite' && p.type !== 'special')
      .map((p) => ({ name: p.code as string, type: p.type })),
    ...(type === 'Patient'
      ? { operation: [{ name: 'everything', definition: 'http://hl7.org/fhir/OperationDefinition/Patient-everything' }] }
      : {}),
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
