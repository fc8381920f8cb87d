// deploy/kubernetes (issue 14): no cluster runs here, so every manifest is validated against the Kubernetes
// OpenAPI schemas (kubernetes-models, offline), fields the schemas do not know are refused, and the references
// between the documents are checked: selectors, names, ports, probes against the gateway's real routes, and the
// gateway's environment through src/composition/config.ts's own loadConfig.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseApiKeysFile } from '../src/policies/auth/api-keys-file.ts';
import { CONFIG_VARS, loadConfig } from '../src/composition/config.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { parseManifests, readKustomization, schemaErrors, unknownFields, type Manifest } from './support/kubernetes-manifests.ts';

const DEPLOY = fileURLToPath(new URL('../deploy/kubernetes/', import.meta.url));
const base = readKustomization(DEPLOY);
const evalRun = readKustomization(path.join(DEPLOY, 'eval'));
const all = [...base.manifests, ...evalRun.manifests];

const find = (kind: string, name: string, among: Manifest[] = all): Manifest => {
  const found = among.find((m) => m.kind === kind && m.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in deploy/kubernetes`);
  return found;
};
const podSpec = (m: Manifest) => m.doc.spec.template.spec;
const workloads = all.filter((m) => ['Deployment', 'StatefulSet', 'Job'].includes(m.kind));
const containers = (m: Manifest): Array<Record<string, any>> => podSpec(m).containers;
const stringData = (m: Manifest): Record<string, string> => m.doc.stringData ?? {};
const isSubset = (sub: Record<string, string>, of: Record<string, string> = {}) => Object.entries(sub).every(([k, v]) => of[k] === v);

const gatewayDeployment = find('Deployment', 'fhir-agent-gateway');
const gatewayConfig = find('ConfigMap', 'fhir-agent-gateway');
const gatewaySecret = find('Secret', 'fhir-agent-gateway');
const gatewayContainer = containers(gatewayDeployment)[0]!;

describe('deploy/kubernetes manifests', () => {
  it('list every YAML file of their directories exactly once, all in one namespace', async () => {
    const { readdir } = await import('node:fs/promises');
    for (const [dir, k] of [
      [DEPLOY, base.kustomization],
      [path.join(DEPLOY, 'eval'), evalRun.kustomization],
    ] as const) {
      const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
      expect([...k.resources].sort()).toEqual(files.sort());
      expect(k.namespace).toBe('fhir-agent-gateway');
    }
    expect(find('Namespace', 'fhir-agent-gateway')).toBeDefined();
    // No two objects of one kind share a name (kubectl apply would silently keep the last).
    const ids = all.map((m) => `${m.kind}/${m.name}`);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it.each(all.map((m) => [`${m.file}: ${m.kind} ${m.name}`, m] as const))('%s validates against the Kubernetes schema', (_, m) => {
    expect(schemaErrors(m)).toEqual([]);
    expect(unknownFields(m)).toEqual([]);
  });

  it('the schema check catches a wrong type and a misspelt field (it can fail)', () => {
    const broken = structuredClone(gatewayDeployment);
    broken.doc.spec.replicas = 'three';
    broken.doc.spec.template.spec.containers[0].readinesProbe = broken.doc.spec.template.spec.containers[0].readinessProbe;
    expect(schemaErrors(broken)).toEqual(['/spec/replicas must be integer']);
    expect(unknownFields(broken)).toEqual(['/spec/template/spec/containers/0/readinesProbe']);
  });

  it('each Service selects the pods of exactly one workload, on a port those pods name', () => {
    for (const service of all.filter((m) => m.kind === 'Service')) {
      const selected = workloads.filter((w) => isSubset(service.doc.spec.selector, w.doc.spec.template.metadata.labels));
      expect(
        selected.map((w) => w.name),
        service.name,
      ).toHaveLength(1);
      const named = containers(selected[0]!).flatMap((c) => (c.ports ?? []).map((p: { name: string }) => p.name));
      for (const port of service.doc.spec.ports) expect(named, `${service.name}:${port.targetPort}`).toContain(port.targetPort);
    }
  });

  it('workload selectors match their own pod labels; the HPA and PDB point at the gateway', () => {
    for (const w of workloads.filter((m) => m.kind !== 'Job')) {
      expect(isSubset(w.doc.spec.selector.matchLabels, w.doc.spec.template.metadata.labels), w.name).toBe(true);
    }
    const hpa = find('HorizontalPodAutoscaler', 'fhir-agent-gateway');
    expect(hpa.doc.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: gatewayDeployment.name });
    expect(hpa.doc.spec.metrics).toEqual([
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: expect.any(Number) } } },
    ]);
    // Utilization is a share of the request: without a CPU request the HPA cannot compute it.
    expect(gatewayContainer.resources.requests.cpu).toBeTruthy();
    expect(hpa.doc.spec.minReplicas).toBeGreaterThan(find('PodDisruptionBudget', 'fhir-agent-gateway').doc.spec.minAvailable);
    expect(find('PodDisruptionBudget', 'fhir-agent-gateway').doc.spec.selector.matchLabels).toEqual(
      gatewayDeployment.doc.spec.selector.matchLabels,
    );
  });

  it('every ConfigMap, Secret (and key), PVC and image a pod uses exists', () => {
    for (const w of workloads) {
      const spec = podSpec(w);
      for (const c of spec.containers) {
        for (const from of c.envFrom ?? []) {
          if (from.configMapRef) find('ConfigMap', from.configMapRef.name);
          if (from.secretRef) find('Secret', from.secretRef.name);
        }
        for (const env of c.env ?? []) {
          const ref = env.valueFrom?.secretKeyRef;
          if (ref) expect(Object.keys(stringData(find('Secret', ref.name))), `${w.name} ${env.name}`).toContain(ref.key);
        }
        // Our image by its kustomize name (images: in kustomization.yaml), anything else pinned to a version.
        expect(c.image, `${w.name}/${c.name}`).toMatch(/^fhir-agent-gateway$|^[\w./-]+:v?\d[\w.-]*$/);
      }
      for (const v of spec.volumes ?? []) {
        if (v.secret) {
          const secret = find('Secret', v.secret.secretName);
          for (const item of v.secret.items ?? []) expect(Object.keys(stringData(secret))).toContain(item.key);
        }
        if (v.persistentVolumeClaim) find('PersistentVolumeClaim', v.persistentVolumeClaim.claimName);
      }
    }
    for (const k of [base.kustomization, evalRun.kustomization])
      expect(k.images).toEqual([expect.objectContaining({ name: 'fhir-agent-gateway' })]);
  });

  it("the gateway's environment is made of src/composition/config.ts's variables and loads with them", async () => {
    const names = [...Object.keys(gatewayConfig.doc.data), ...gatewayContainer.env.map((e: { name: string }) => e.name)];
    expect(names.filter((n) => !(n in CONFIG_VARS))).toEqual([]);
    expect(gatewayContainer.envFrom).toEqual([{ configMapRef: { name: gatewayConfig.name } }]);
    // The keys file, where the Deployment mounts it, is the Secret's api-keys.yaml: write that content to a temp
    // path and let loadConfig read it, as the server would at boot.
    const mount = gatewayContainer.volumeMounts.find((v: { name: string }) => v.name === 'api-keys');
    expect(path.posix.dirname(gatewayConfig.doc.data.API_KEYS_FILE)).toBe(mount.mountPath);
    const dir = await mkdtemp(path.join(tmpdir(), 'deploy-keys-'));
    try {
      const keysFile = path.join(dir, path.posix.basename(gatewayConfig.doc.data.API_KEYS_FILE));
      await writeFile(keysFile, stringData(gatewaySecret)['api-keys.yaml']!);
      const config = loadConfig({
        ...gatewayConfig.doc.data,
        UPSTREAM_API_KEY: stringData(gatewaySecret).UPSTREAM_API_KEY,
        API_KEYS_FILE: keysFile,
      });
      expect(config.authEnabled).toBe(true);
      expect(config.HOST).toBe('0.0.0.0');
      expect(config.auditSink).toBe('fhir');
      expect(config.apiKeys.map((k) => k.access.id)).toEqual(['team-notebooks', 'eval-runner']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    expect(parseApiKeysFile(stringData(gatewaySecret)['api-keys.yaml']!)).toHaveLength(2);
    expect(Number(gatewayConfig.doc.data.PORT)).toBe(gatewayContainer.ports[0].containerPort);
  });

  it('URLs between services name real Services and ports; HAPI and PostgreSQL agree on the database', () => {
    const servicePort = (url: string) => {
      const u = new URL(url.replace(/^jdbc:/, ''));
      const service = find('Service', u.hostname);
      expect(
        service.doc.spec.ports.map((p: { port: number }) => p.port),
        url,
      ).toContain(Number(u.port));
      return u;
    };
    servicePort(gatewayConfig.doc.data.FHIR_BASE_URL);
    servicePort(gatewayConfig.doc.data.REDIS_URL);
    const hapiEnv = Object.fromEntries(
      containers(find('Deployment', 'hapi'))[0]!.env.map((e: { name: string; value?: string }) => [e.name, e]),
    );
    const jdbc = servicePort(hapiEnv['spring.datasource.url'].value);
    const pg = stringData(find('Secret', 'postgres'));
    expect(jdbc.pathname).toBe(`/${pg.POSTGRES_DB}`);
    expect(hapiEnv['spring.datasource.username'].valueFrom.secretKeyRef).toEqual({ name: 'postgres', key: 'POSTGRES_USER' });
    expect(hapiEnv['spring.jpa.properties.hibernate.dialect'].value).toBe('ca.uhn.fhir.jpa.model.dialect.HapiFhirPostgresDialect');
    // PostgreSQL keeps its data on a volume claim; its Service is the StatefulSet's governing Service.
    const postgres = find('StatefulSet', 'postgres');
    expect(postgres.doc.spec.serviceName).toBe('postgres');
    expect(postgres.doc.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toMatch(/^\d+Gi$/);
    expect(containers(postgres)[0]!.volumeMounts[0].name).toBe(postgres.doc.spec.volumeClaimTemplates[0].metadata.name);
  });

  it('the eval is an Indexed Job whose shard count, gateway URL and model match the rest', () => {
    const shards = find('Job', 'eval-shards');
    const config = find('ConfigMap', 'eval-run').doc.data;
    expect(shards.doc.spec.completionMode).toBe('Indexed');
    expect(shards.doc.spec.completions).toBe(Number(config.SHARDS));
    expect(shards.doc.spec.parallelism).toBe(Number(config.SHARDS));
    const script = containers(shards)[0]!.command.join(' ');
    expect(script).toContain('--shard "$shard/$SHARDS"');
    expect(script).toContain('$((JOB_COMPLETION_INDEX + 1))');
    const args = config.EVAL_ARGS.split(/\s+/);
    const arg = (flag: string) => args[args.indexOf(flag) + 1];
    const gatewayUrl = new URL(arg('--base-url'));
    expect(gatewayUrl.hostname).toBe('fhir-agent-gateway');
    expect(Number(gatewayUrl.port)).toBe(find('Service', 'fhir-agent-gateway').doc.spec.ports[0].port);
    expect(arg('--model')).toBe(gatewayConfig.doc.data.MODEL_ID);
    // The harness cleans up on the same FHIR server the gateway's tools write to.
    expect(arg('--fhir-base-url')).toBe(gatewayConfig.doc.data.FHIR_BASE_URL);
    // Shards and the report share the runs volume at the same path.
    const report = find('Job', 'eval-report');
    for (const job of [shards, report]) {
      expect(containers(job)[0]!.volumeMounts).toEqual([{ name: 'runs', mountPath: config.RUNS_DIR }]);
      expect(podSpec(job).volumes).toEqual([{ name: 'runs', persistentVolumeClaim: { claimName: 'eval-runs' } }]);
    }
    expect(find('PersistentVolumeClaim', 'eval-runs').doc.spec.accessModes).toEqual(['ReadWriteMany']);
  });

  describe('rendered by kustomize (kubectl kustomize, when kubectl is installed)', () => {
    const render = (dir: string) =>
      promisify(execFile)('kubectl', ['kustomize', dir], { timeout: 60_000 }).then(
        (r) => parseManifests(r.stdout, `kubectl kustomize ${path.relative(DEPLOY, dir) || '.'}`),
        (error: NodeJS.ErrnoException & { stderr?: string }) => {
          if (error.code === 'ENOENT') return undefined;
          throw new Error(`kubectl kustomize ${dir} failed: ${error.stderr ?? error.message}`, { cause: error });
        },
      );

    it.each([
      ['deploy/kubernetes', DEPLOY, base.manifests],
      ['deploy/kubernetes/eval', path.join(DEPLOY, 'eval'), evalRun.manifests],
    ])('%s builds, and what it renders is still valid, namespaced and labelled', async (_, dir, sources) => {
      const rendered = await render(dir);
      if (!rendered) {
        console.warn('[deploy manifests] skipping the kustomize build: no kubectl on PATH (the sources are validated above)');
        return;
      }
      expect(rendered.map((m) => `${m.kind}/${m.name}`).sort()).toEqual(sources.map((m) => `${m.kind}/${m.name}`).sort());
      for (const m of rendered) {
        expect(schemaErrors(m), `${m.kind}/${m.name}`).toEqual([]);
        expect(unknownFields(m), `${m.kind}/${m.name}`).toEqual([]);
        expect(m.doc.metadata.labels['app.kubernetes.io/part-of']).toBe('fhir-agent-gateway');
        if (m.kind !== 'Namespace') expect(m.doc.metadata.namespace, `${m.kind}/${m.name}`).toBe('fhir-agent-gateway');
        for (const c of m.doc.spec?.template?.spec?.containers ?? []) expect(c.image).not.toBe('fhir-agent-gateway');
      }
    });
  });

  describe("the gateway's probes hit real routes", () => {
    let gw: RunningGateway;
    beforeAll(async () => {
      gw = await startGateway();
    });
    afterAll(() => gw?.close());

    it('readiness on /ready, liveness and start-up on /health, on the named container port', async () => {
      expect(gatewayContainer.readinessProbe.httpGet).toEqual({ path: '/ready', port: 'http' });
      expect(gatewayContainer.livenessProbe.httpGet).toEqual({ path: '/health', port: 'http' });
      expect(gatewayContainer.startupProbe.httpGet).toEqual({ path: '/health', port: 'http' });
      expect(gatewayContainer.ports.map((p: { name: string }) => p.name)).toContain('http');
      const health = await fetch(`${gw.baseUrl}/health`);
      expect(health.status).toBe(200);
      // Ready or not (the fake upstream answers; no FHIR server is configured here), the route exists.
      const ready = await fetch(`${gw.baseUrl}/ready`);
      expect([200, 503]).toContain(ready.status);
      expect(await ready.json()).toHaveProperty('status');
      expect((await fetch(`${gw.baseUrl}/no-such-probe`)).status).toBe(404);
    });
  });
});
