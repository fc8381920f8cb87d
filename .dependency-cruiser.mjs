// The layering, checked by `npm run lint` (dependency-cruiser). From the bottom up:
//   src/shared                    helpers that know nothing of the gateway
//   src/openai, src/fhir          the two vocabularies: OpenAI's wire schemas, FHIR's datatypes and outcomes
//   src/upstream                  the model contract (model-upstream.ts) and its adapters
//   src/fhir-client               the FHIR client contract (fhir-client.ts) and the HTTP client
//   src/fhir-server               the embedded FHIR server (entry: embedded-fhir-server.ts, embedded-fhir-plugin.ts)
//   src/fhir-loader               the bulk loader (entry: loader-cli.ts)
//   src/agent                     the tool loop; tool-contract.ts is what tools/ implements
//   src/auth, src/audit, src/rate-limit   policies, injected into the agent and the edge
//   src/http, src/mcp, ...        the edge
//   src/compose, src/*.ts         config, and the composition root (compose-gateway.ts) with the entries
// No file and no folder imports itself through others. tools/ depends only on the contracts; src/ never imports
// test/ or scripts/, and only the composition root imports tools/ or fixtures/.

const EDGE = '^src/(http|mcp|telemetry|redis|readiness|openapi)/';
const ROOT = ['^src/[^/]+[.]ts$', '^src/compose/'];
const FHIR_PRODUCTS = '^src/fhir-(client|server|loader)/';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A module that imports itself through others: split out the shared part, or inject it.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-circular-folders',
      severity: 'error',
      comment: 'Folders that import each other.',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'src-not-test-or-scripts',
      severity: 'error',
      comment: 'The service never reaches into the tests or the scripts.',
      from: { path: '^src/' },
      to: { path: '^(test|scripts)/' },
    },
    {
      name: 'one-composition-root',
      severity: 'error',
      comment: 'Only src/compose-gateway.ts joins the gateway to tools/ and fixtures/; the package entry only re-exports the tools.',
      from: { path: '^src/', pathNot: '^src/(compose-gateway|index)[.]ts$' },
      to: { path: '^(tools|fixtures)/' },
    },
    {
      name: 'entry-only-re-exports-tools',
      severity: 'error',
      from: { path: '^src/index[.]ts$' },
      to: { path: '^(tools|fixtures)/', dependencyTypes: ['import', 'type-only', 'dynamic-import', 'require'] },
    },
    {
      name: 'entry-not-fixtures',
      severity: 'error',
      from: { path: '^src/index[.]ts$' },
      to: { path: '^fixtures/' },
    },
    {
      name: 'no-lazy-project-imports',
      severity: 'error',
      comment:
        'Import collaborators statically (or take them as arguments), so a moved file fails the run. The one exception ' +
        'loads the in-process model only when LOCAL_MODEL is set: node-llama-cpp is an optional peer dependency.',
      from: { path: '^src/', pathNot: '^src/upstream/local/import-local-model[.]ts$' },
      to: { path: '^(src|tools|fixtures|evals|test|scripts)/', dependencyTypes: ['dynamic-import'] },
    },
    {
      name: 'shared-is-a-leaf',
      severity: 'error',
      from: { path: '^src/shared/' },
      to: { path: '^src/', pathNot: '^src/shared/' },
    },
    {
      name: 'vocabularies-at-the-bottom',
      severity: 'error',
      comment: "OpenAI's wire schemas and FHIR's vocabulary know nothing else of the gateway.",
      from: { path: '^src/(openai|fhir)/' },
      to: { path: '^src/', pathNot: '^src/(shared|openai|fhir)/' },
    },
    {
      name: 'model-contract-above-the-wire',
      severity: 'error',
      comment: 'The model contract and its adapters know no FHIR code, agent, policy or edge.',
      from: { path: '^src/upstream/' },
      to: { path: '^src/', pathNot: '^src/(shared|openai|upstream)/' },
    },
    {
      name: 'fhir-products-apart',
      severity: 'error',
      comment: 'The FHIR client, the embedded server and the loader share only src/fhir; the loader writes through the client contract.',
      from: { path: FHIR_PRODUCTS, pathNot: '^src/fhir-loader/loader-cli[.]ts$' },
      to: {
        path: '^src/',
        pathNot: ['^src/(shared|fhir)/', '^src/fhir-$1/', '^src/fhir-client/fhir-client[.]ts$'],
      },
    },
    {
      name: 'fhir-loader-entry',
      severity: 'error',
      comment: 'The loader CLI (loader-cli.ts) picks the HTTP client the loader writes through, and nothing more.',
      from: { path: '^src/fhir-loader/loader-cli[.]ts$' },
      to: { path: '^src/', pathNot: '^src/(shared|fhir|fhir-loader|fhir-client)/' },
    },
    {
      name: 'fhir-server-entry',
      severity: 'error',
      comment: 'The embedded server is used through its entry: the server, its fastify plugin and the access hook it takes.',
      from: { pathNot: '^src/fhir-server/' },
      to: { path: '^src/fhir-server/', pathNot: '^src/fhir-server/(embedded-fhir-server|embedded-fhir-plugin|repository-access)[.]ts$' },
    },
    {
      name: 'fhir-loader-entries',
      severity: 'error',
      comment: 'The loader is its CLI (loader-cli.ts); the gateway and the evals reuse only its reading of an EHR folder.',
      from: { pathNot: '^src/fhir-loader/' },
      to: { path: '^src/fhir-loader/', pathNot: '^src/fhir-loader/(loader-cli|read-ehr-bundles)[.]ts$' },
    },
    {
      name: 'agent-below-the-policies',
      severity: 'error',
      from: { path: '^src/agent/' },
      to: { path: ['^src/(auth|audit|rate-limit)/', EDGE, ...ROOT] },
    },
    {
      name: 'policies-see-only-the-agent-contract',
      severity: 'error',
      from: { path: '^src/(auth|audit)/' },
      to: { path: '^src/agent/', pathNot: '^src/agent/tool-contract[.]ts$' },
    },
    {
      name: 'policies-below-the-edge',
      severity: 'error',
      from: { path: '^src/(auth|audit|rate-limit)/' },
      to: { path: [EDGE, ...ROOT] },
    },
    {
      name: 'edge-does-not-compose',
      severity: 'error',
      comment: 'Nothing below the root builds the gateway: that is src/compose-gateway.ts and its helpers in src/compose/.',
      from: { path: '^src/[^/]+/', pathNot: '^src/compose/' },
      to: { path: ['^src/(app|compose-gateway|server|mcp-stdio|index)[.]ts$', '^src/compose/'] },
    },
    {
      name: 'tools-use-only-contracts',
      severity: 'error',
      comment: 'tools/ implements src/agent/tool-contract.ts over the FHIR client, and knows nothing else of the gateway.',
      from: { path: '^tools/' },
      to: {
        path: '^src/',
        pathNot: [
          '^src/agent/tool-contract[.]ts$',
          '^src/openai/chat-request[.]ts$',
          '^src/fhir/[^/]+[.]ts$',
          '^src/fhir-client/(fhir-client|search-capabilities-of)[.]ts$',
        ],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a type is a dependency too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
