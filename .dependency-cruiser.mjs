// The layering, checked by `npm run lint` (dependency-cruiser). `ls src` is the architecture, from the bottom up:
//   shared       helpers that know nothing of the gateway
//   vocabulary   the two vocabularies: OpenAI's wire schemas (openai/) and FHIR's datatypes and outcomes (fhir/)
//   model        the model contract (model-upstream.ts), its dialects, the in-process model, prompted tools
//   fhir         the FHIR client contract and clients (client/), the embedded server (server/), the loader (loader/)
//   agent        the tool loop; tool-contract.ts is what tools implement
//   tools        the FHIR tools: kit/ → medication/ → summaries/ → catalogue/, served by the files at its root
//   policies     auth, audit, rate-limit: injected into the agent and the edge
//   edge         http, mcp, telemetry, readiness, redis, openapi
//   composition  config, the composition root (compose-gateway.ts), the entries (server.ts, mcp-stdio.ts)
// A folder imports only the layers below it; the rules after the first one add what the order cannot say.
// Test files (*.test.ts beside their modules) are outside the rules.

const LAYERS = ['shared', 'vocabulary', 'model|fhir', 'agent', 'tools', 'policies', 'edge', 'composition'];
const TOOL_GROUPS = ['kit', 'medication', 'summaries', 'catalogue', '[^/]+[.]ts$'];

/** One rule per step of an ordered list of folders under `base`: none may import the steps above it. */
const inOrder = (base, steps, also = []) =>
  steps.slice(0, -1).map((names, i) => ({
    name: `order-${base.replaceAll('/', '-')}${names.replace(/[|]/g, '-')}`,
    severity: 'error',
    from: { path: `^${base}(${names})/` },
    to: { path: [`^${base}(${steps.slice(i + 1).join('|')})`, ...also] },
  }));

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    // The package entry (src/index.ts) is above every layer.
    ...inOrder('src/', LAYERS, ['^src/index[.]ts$']),
    // The tools' own groups; the files at the root of tools/ serve them.
    ...inOrder('src/tools/', TOOL_GROUPS),
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    { name: 'no-circular-folders', severity: 'error', scope: 'folder', from: {}, to: { circular: true } },
    {
      name: 'src-not-test-or-scripts',
      severity: 'error',
      comment: 'The service never reaches into the tests, the scripts or the synthetic EHR (the entry re-exports it).',
      from: { path: '^src/', pathNot: '^src/(composition/compose-gateway|index)[.]ts$' },
      to: { path: '^(test|scripts|fixtures)/' },
    },
    {
      name: 'no-lazy-project-imports',
      severity: 'error',
      comment:
        'Import collaborators statically (or take them as arguments), so a moved file fails the run. The one exception ' +
        'loads the in-process model only when LOCAL_MODEL is set: node-llama-cpp is an optional peer dependency.',
      from: { path: '^src/', pathNot: '^src/model/local/import-local-model[.]ts$' },
      to: { path: '^(src|fixtures|evals|test|scripts)/', dependencyTypes: ['dynamic-import'] },
    },
    {
      name: 'model-apart-from-fhir',
      severity: 'error',
      comment: 'The model and FHIR share a layer and know nothing of each other.',
      from: { path: '^src/(model|fhir)/' },
      to: { path: '^src/(model|fhir)/', pathNot: '^src/$1/' },
    },
    {
      name: 'fhir-products-apart',
      severity: 'error',
      comment: 'The FHIR client, the embedded server and the loader share nothing; the loader writes through the client contract.',
      from: { path: '^src/fhir/(client|server|loader)/', pathNot: '^src/fhir/loader/loader-cli[.]ts$' },
      to: { path: '^src/fhir/', pathNot: ['^src/fhir/$1/', '^src/fhir/client/fhir-client[.]ts$'] },
    },
    {
      name: 'fhir-entries',
      severity: 'error',
      comment:
        'The embedded server is reached through its server, its fastify plugin and the access hook it takes; the loader ' +
        'through its CLI and its reading of an EHR folder.',
      from: { pathNot: '^src/fhir/(server|loader)/' },
      to: {
        path: '^src/fhir/(server|loader)/',
        pathNot:
          '^src/fhir/(server/(embedded-fhir-server|embedded-fhir-plugin|repository-access)|loader/(loader-cli|read-ehr-bundles))[.]ts$',
      },
    },
    {
      name: 'fhir-loader-picks-the-client',
      severity: 'error',
      comment: 'Only the loader CLI picks the HTTP client the loader writes through.',
      from: { path: '^src/fhir/loader/', pathNot: '^src/fhir/loader/loader-cli[.]ts$' },
      to: { path: '^src/fhir/client/', pathNot: '^src/fhir/client/fhir-client[.]ts$' },
    },
    {
      name: 'tools-see-contracts',
      severity: 'error',
      comment: 'Tools implement the agent tool contract over the FHIR client contract, and know nothing else of the gateway.',
      from: { path: '^src/tools/' },
      to: {
        path: '^src/(model|fhir|agent)/',
        pathNot: ['^src/agent/tool-contract[.]ts$', '^src/fhir/client/(fhir-client|search-capabilities-of)[.]ts$'],
      },
    },
    {
      name: 'only-composition-uses-tools',
      severity: 'error',
      comment: 'The built-in tools are joined to the gateway in one place, the composition root.',
      from: { path: '^src/(policies|edge)/' },
      to: { path: '^src/tools/' },
    },
    {
      name: 'policies-see-only-the-agent-contract',
      severity: 'error',
      from: { path: '^src/policies/' },
      to: { path: '^src/agent/', pathNot: '^src/agent/tool-contract[.]ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '[.]test[.]ts$' },
    // Type-only imports count: a type is a dependency too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
