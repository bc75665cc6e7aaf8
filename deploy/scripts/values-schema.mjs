#!/usr/bin/env node
// Writes deploy/charts/<deployable>/values.schema.json: the JSON Schema helm checks every chart's values against
// (helm lint, template, install, upgrade), so a wrong type or an unknown key fails before anything renders.
// One source for the six charts, whose values are all the svc-lib defaults (charts/svc-lib/templates/_defaults.tpl);
// only component.name differs. `--check` writes nothing and exits 1 when a committed schema is stale (the Helm test
// runs it).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const chartsDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'charts');
export const DEPLOYABLES = ['gateway', 'crm', 'tasks', 'chat', 'files', 'webhooks'];

const str = { type: 'string' };
const bool = { type: 'boolean' };
const int = (minimum = 0) => ({ type: 'integer', minimum });
const nullable = (s) => ({ anyOf: [s, { type: 'null' }] });
const map = (values) => ({ type: 'object', additionalProperties: values });
// Kubernetes objects passed through as they are (resources, affinity, security contexts…): the API server checks them.
const k8s = { type: 'object' };
const list = { type: 'array' };
const closed = (properties, required = []) => ({
  type: 'object',
  additionalProperties: false,
  properties,
  ...(required.length ? { required } : {}),
});
const probe = closed({ path: str, periodSeconds: int(1), timeoutSeconds: int(1), failureThreshold: int(1) });
const intOrPercent = nullable({ anyOf: [int(0), { type: 'string', pattern: '^\\d+%$' }] });

export function schemaFor(name) {
  return {
    $schema: 'https://json-schema.org/draft-07/schema#',
    title: `Values of the ${name} chart`,
    type: 'object',
    additionalProperties: false,
    properties: {
      global: k8s,
      'svc-lib': k8s,
      component: closed({ name: { const: name }, kind: { enum: ['service', 'gateway'] }, main: str, migrate: str }),
      nameOverride: str,
      fullnameOverride: str,
      image: closed({
        registry: str,
        repository: str,
        tag: { type: ['string', 'number'] },
        digest: str,
        pullPolicy: { enum: ['Always', 'IfNotPresent', 'Never'] },
      }),
      imagePullSecrets: list,
      workingDir: str,
      replicaCount: int(0),
      revisionHistoryLimit: int(0),
      strategy: k8s,
      listenHost: str,
      ports: closed({ http: nullable(int(1)), grpc: nullable(int(1)), httpEnv: str, grpcEnv: str }),
      env: map({ type: ['string', 'number', 'boolean', 'null'] }),
      existingSecret: str,
      secretEnv: map(nullable(str)),
      extraEnv: list,
      service: closed({ type: { enum: ['ClusterIP', 'NodePort', 'LoadBalancer'] }, annotations: map(str) }),
      ingress: closed({ enabled: bool, className: str, annotations: map(str), hosts: list, tls: list }),
      serviceAccount: closed({ create: bool, name: str, annotations: map(str), automountToken: bool }),
      podAnnotations: map(str),
      podLabels: map(str),
      metrics: closed({ scrapeAnnotations: bool, path: str }),
      podSecurityContext: k8s,
      securityContext: k8s,
      tmpVolume: closed({ sizeLimit: str }),
      extraVolumes: list,
      extraVolumeMounts: list,
      resources: k8s,
      probes: closed({ startup: probe, liveness: probe, readiness: probe }),
      terminationGracePeriodSeconds: int(0),
      preStop: closed({ sleepSeconds: int(0), useExec: bool }),
      pdb: closed({ enabled: bool, maxUnavailable: intOrPercent, minAvailable: intOrPercent }),
      autoscaling: closed({
        enabled: bool,
        minReplicas: int(1),
        maxReplicas: int(1),
        targetCPUUtilizationPercentage: nullable(int(1)),
        targetMemoryUtilizationPercentage: nullable(int(1)),
      }),
      migration: closed({
        enabled: bool,
        backoffLimit: int(0),
        activeDeadlineSeconds: int(1),
        serviceAccountName: str,
        resources: k8s,
        annotations: map(str),
      }),
      nodeSelector: map(str),
      tolerations: list,
      affinity: k8s,
      topologySpreadConstraints: list,
      spreadAcrossNodes: bool,
      priorityClassName: str,
      networkPolicy: closed({ enabled: bool, extraIngress: list }),
      serviceMonitor: closed({ enabled: bool, interval: str, scrapeTimeout: str, labels: map(str) }),
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const name of DEPLOYABLES) {
    const file = join(chartsDir, name, 'values.schema.json');
    const text = `${JSON.stringify(schemaFor(name), null, 2)}\n`;
    let current = '';
    try {
      current = readFileSync(file, 'utf8');
    } catch {}
    if (current === text) continue;
    stale++;
    if (check) console.error(`${file} is stale: run node deploy/scripts/values-schema.mjs`);
    else writeFileSync(file, text);
  }
  if (check && stale) process.exit(1);
}
