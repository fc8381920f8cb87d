// Offline validation of the Kubernetes manifests under deploy/: every document against the Kubernetes OpenAPI
// schemas compiled into kubernetes-models, plus a check for fields the schemas do not know (the compiled schemas
// accept unknown fields, as a lenient API server would, so a misspelt `readinesProbe` would pass unnoticed).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, PersistentVolumeClaim, Secret, Service } from 'kubernetes-models/v1';

/** A parsed manifest document, with where it came from. */
export interface Manifest {
  file: string;
  apiVersion: string;
  kind: string;
  name: string;
  doc: Record<string, any>;
}

type Validatable = { validate(): void };
const MODELS: Record<string, new (data: any) => Validatable> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'batch/v1/Job': Job,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

const kustomizationSchema = z.looseObject({
  apiVersion: z.literal('kustomize.config.k8s.io/v1beta1'),
  kind: z.literal('Kustomization'),
  namespace: z.string().min(1),
  resources: z.array(z.string().min(1)).min(1),
});
export type Kustomization = z.infer<typeof kustomizationSchema>;

const manifestHead = z.looseObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  metadata: z.looseObject({ name: z.string().min(1) }),
});

/** Reads a kustomization directory: its kustomization.yaml and every document of every resource it lists. */
export function readKustomization(dir: string): { kustomization: Kustomization; manifests: Manifest[] } {
  const kustomization = kustomizationSchema.parse(
    parseYaml(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8'), 'kustomization.yaml')[0],
  );
  const manifests = kustomization.resources.flatMap((resource) => parseManifests(readFileSync(path.join(dir, resource), 'utf8'), resource));
  return { kustomization, manifests };
}

/** The Kubernetes objects in a multi-document YAML text (a file, or `kubectl kustomize` output). */
export function parseManifests(text: string, file: string): Manifest[] {
  return parseYaml(text, file).map((doc, i) => {
    const head = manifestHead.safeParse(doc);
    if (!head.success) throw new Error(`${file} document ${i + 1}: ${head.error.issues[0]?.message}`);
    const { apiVersion, kind, metadata } = head.data;
    return { file, apiVersion, kind, name: metadata.name, doc: doc as Record<string, any> };
  });
}

function parseYaml(text: string, file: string): unknown[] {
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) throw new Error(`${file}: not YAML documents`);
  return docs.map((d, i) => {
    if (d.errors.length) throw new Error(`${file} document ${i + 1}: ${d.errors[0]!.message}`);
    return d.toJS();
  });
}

/** Schema errors of one manifest (empty: valid); an unknown apiVersion/kind is an error too. */
export function schemaErrors(m: Manifest): string[] {
  const errors = validationErrors(m, m.doc);
  return errors === undefined ? [`no schema for ${m.apiVersion}/${m.kind}`] : errors.map((e) => `${e.instancePath || '/'} ${e.message}`);
}

/**
 * Paths of fields the schema does not know. Each field in turn is replaced with a value no schema type accepts
 * (an array of arrays is not a string, number, boolean, object or array of those): a known field then fails
 * validation at or below its path; an unknown one passes.
 */
export function unknownFields(m: Manifest): string[] {
  const unknown: string[] = [];
  const visit = (value: unknown, at: Array<string | number>) => {
    if (Array.isArray(value)) value.forEach((item, i) => visit(item, [...at, i]));
    else if (value && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        const fieldPath = [...at, key];
        const probe = structuredClone(m.doc);
        setAt(probe, fieldPath, [[]]);
        const pointer = `/${fieldPath.map((p) => String(p).replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
        const errors = validationErrors(m, probe) ?? [];
        if (!errors.some((e) => e.instancePath === pointer || e.instancePath.startsWith(`${pointer}/`))) unknown.push(pointer);
        else visit(child, fieldPath);
      }
    }
  };
  visit(m.doc, []);
  return unknown;
}

function validationErrors(m: Manifest, doc: unknown): Array<{ instancePath: string; message?: string }> | undefined {
  const Model = MODELS[`${m.apiVersion}/${m.kind}`];
  if (!Model) return undefined;
  try {
    new Model(doc).validate();
    return [];
  } catch (error) {
    const errors = (error as { errors?: Array<{ instancePath: string; message?: string }> }).errors;
    if (!errors) throw error;
    return errors;
  }
}

function setAt(target: any, at: Array<string | number>, value: unknown): void {
  let node = target;
  for (const key of at.slice(0, -1)) node = node[key];
  node[at.at(-1)!] = value;
}
