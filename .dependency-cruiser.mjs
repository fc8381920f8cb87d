// The layering, checked by `npm run lint` (dependency-cruiser). From the bottom up:
//   src/shared                 helpers that know nothing of the gateway
//   src/openai, src/upstream   the wire schemas and the model contract, and the upstream adapters
//   src/fhir                   the FHIR client contract and its implementations
//   src/agent                  the tool loop; tool-contract.ts is what tools/ implements
//   src/auth, src/audit        policies, injected into the agent and the FHIR edge
//   src/http, src/mcp, ...     the edge
//   src/*.ts                   config, and the composition root (compose-gateway.ts) with the entries
// No file and no folder imports itself through others. tools/ depends only on the contracts; src/ never imports
// test/ or scripts/, and only the composition root imports tools/ or fixtures/.

const EDGE = '^src/(http|mcp|telemetry|redis|readiness|openapi)/';
const ROOT_FILES = '^src/[^/]+[.]ts$';

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
      comment:
        'Folders that import each other. Known and left: src/openai ↔ src/upstream (chat-completion.ts and to-chat-params.ts translate the wire to the model contract; they belong at the HTTP edge).',
      scope: 'folder',
      from: { pathNot: '^src/(openai|upstream)' },
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
      name: 'contracts-at-the-bottom',
      severity: 'error',
      comment: 'The wire schemas and the model contract (and its adapters) know no agent, policy, FHIR code or edge.',
      from: { path: '^src/(openai|upstream)/' },
      to: { path: [`^src/(agent|auth|audit|fhir)/`, EDGE, ROOT_FILES] },
    },
    {
      name: 'fhir-client-below-the-agent',
      severity: 'error',
      from: { path: '^src/fhir/' },
      to: { path: ['^src/(agent|auth|audit|openai|upstream)/', EDGE, ROOT_FILES] },
    },
    {
      name: 'agent-below-the-policies',
      severity: 'error',
      from: { path: '^src/agent/' },
      to: { path: ['^src/(auth|audit)/', EDGE, ROOT_FILES] },
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
      from: { path: '^src/(auth|audit)/' },
      to: { path: [EDGE, ROOT_FILES] },
    },
    {
      name: 'edge-does-not-compose',
      severity: 'error',
      comment: 'Nothing in a src/ folder builds the gateway: that is the root files’ job.',
      from: { path: '^src/[^/]+/' },
      to: { path: '^src/(app|compose-gateway|gateway-deps|server|mcp-stdio|index)[.]ts$' },
    },
    {
      name: 'tools-use-only-contracts',
      severity: 'error',
      comment: 'tools/ implements src/agent/tool-contract.ts over the FHIR client, and knows nothing else of the gateway.',
      from: { path: '^tools/' },
      to: {
        path: '^src/',
        pathNot: ['^src/agent/tool-contract[.]ts$', '^src/openai/chat-request[.]ts$', '^src/fhir/[^/]+[.]ts$'],
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
