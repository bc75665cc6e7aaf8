/**
 * The images and the compose stack (decision 0106), checked without a container runtime (none can pull a base image
 * here): each Dockerfile's stages, user, health check and command; the bundles it copies are built by the script it
 * runs and start for real on Node with the repository's node_modules; compose.yaml gives every service an environment
 * its own configuration schema accepts.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chatService } from '@svc/chat';
import { crmService } from '@svc/crm';
import { filesService } from '@svc/files';
import { gatewayConfigSchema } from '@svc/gateway';
import { loadConfig, serviceConfigSchema } from '@svc/platform/config';
import type { ServiceDefinition } from '@svc/platform/service';
import { createTestDatabase, TEST_NATS_URL, TEST_REDIS_URL, type TestDatabase } from '@svc/platform/testing';
import { tasksService } from '@svc/tasks';
import { webhooksService } from '@svc/webhooks';
import { expect } from 'chai';
import { parse } from 'yaml';
import { bundle } from '../../scripts/bundle.mjs';
import { type Child, REPO_ROOT, spawnScript, waitReady } from '../support/processes.js';
import { freePort } from '../support/stack.js';

const DEPLOYABLES = ['gateway', 'crm', 'tasks', 'chat', 'files', 'webhooks'] as const;
type Deployable = (typeof DEPLOYABLES)[number];
const dirOf = (name: Deployable) => (name === 'gateway' ? 'gateway' : `services/${name}`);
const definitions: Record<Exclude<Deployable, 'gateway'>, ServiceDefinition<any, any>> = {
  crm: crmService,
  tasks: tasksService,
  chat: chatService,
  files: filesService,
  webhooks: webhooksService,
};

interface Stage {
  from: string;
  name?: string;
  lines: string[];
}

function stagesOf(dockerfile: string): Stage[] {
  const stages: Stage[] = [];
  const text = dockerfile.replace(/\\\n\s*/g, ' ');
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (!line || line.startsWith('#')) continue;
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (from) stages.push({ from: from[1] as string, name: from[2], lines: [] });
    else stages.at(-1)?.lines.push(line);
  }
  return stages;
}

describe('deploy: Dockerfiles and compose.yaml', () => {
  const workspaces = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { workspaces: string[] }).workspaces;

  for (const name of DEPLOYABLES) {
    describe(`${dirOf(name)}/Dockerfile`, () => {
      const stages = stagesOf(readFileSync(join(REPO_ROOT, dirOf(name), 'Dockerfile'), 'utf8'));
      const runtime = stages.at(-1) as Stage;

      it('builds in stages on Node 22: a bundle stage, a production-dependencies stage and the runtime', () => {
        expect(stages.map((s) => s.name)).to.deep.equal(['build', 'deps', undefined]);
        for (const s of stages) expect(s.from).to.match(/^node:22(-[a-z]+)*-slim$/);
        const build = stages[0] as Stage;
        expect(build.lines).to.include(`RUN node scripts/bundle.mjs ${name}`);
        const deps = stages[1] as Stage;
        expect(deps.lines.find((l) => l.startsWith('RUN npm ci')))
          .to.include('--omit=dev')
          .and.include(`--workspace @svc/${name}`);
        // npm ci needs the package.json of every workspace the lock file names.
        for (const s of [build, deps]) for (const w of workspaces) expect(s.lines, w).to.include(`COPY ${w}/package.json ${w}/`);
      });

      it('runs the bundled JavaScript as the non-root node user, with a health check on /healthz', () => {
        expect(runtime.lines).to.include('USER node');
        expect(runtime.lines).to.include(`COPY --from=build --chown=node:node /src/dist/${name} ./dist/${name}`);
        expect(runtime.lines).to.include('COPY --from=deps --chown=node:node /app/node_modules ./node_modules');
        expect(runtime.lines).to.include(`CMD ["node", "--enable-source-maps", "dist/${name}/main.mjs"]`);
        const health = runtime.lines.find((l) => l.startsWith('HEALTHCHECK'));
        expect(health).to.include('/healthz');
        expect(runtime.lines.find((l) => l.startsWith('ENV'))).to.include('HOST=0.0.0.0');
        expect(runtime.lines.join('\n')).to.not.match(/tsx/);
      });
    });
  }

  describe('the bundles the images run', () => {
    const out = join(REPO_ROOT, 'dist', `.test-${randomBytes(4).toString('hex')}`);
    let db: TestDatabase;
    const children: Child[] = [];
    before(async function () {
      this.timeout(120_000);
      await bundle([...DEPLOYABLES], out);
      db = await createTestDatabase();
    });
    after(async () => {
      await Promise.all(children.map((c) => c.stop()));
      await db?.drop();
      rmSync(out, { recursive: true, force: true });
    });

    it('are built for every deployable: main, and migrate for the services', () => {
      for (const name of DEPLOYABLES) {
        expect(existsSync(join(out, name, 'main.mjs')), name).to.equal(true);
        expect(existsSync(join(out, name, 'migrate.mjs')), name).to.equal(name !== 'gateway');
      }
    });

    it('start on plain Node, without tsx: crm migrates and gets ready, the gateway answers in front of it', async function () {
      this.timeout(120_000);
      const secret = randomBytes(32).toString('hex');
      const crmPorts = { http: await freePort(), grpc: await freePort() };
      const crm = spawnScript(join(out, 'crm', 'main.mjs'), {
        DATABASE_URL: db.url,
        NATS_URL: TEST_NATS_URL,
        NATS_STREAM: `IMG_${randomBytes(3).toString('hex')}`,
        EVENT_SUBJECT_PREFIX: `img${randomBytes(3).toString('hex')}`,
        IDENTITY_TOKEN_SECRET: secret,
        HTTP_PORT: String(crmPorts.http),
        GRPC_PORT: String(crmPorts.grpc),
        LOG_LEVEL: 'warn',
      });
      children.push(crm);
      await waitReady(`http://127.0.0.1:${crmPorts.http}`, 60_000);
      const port = await freePort();
      const crmUrl = `http://127.0.0.1:${crmPorts.http}`;
      const gateway = spawnScript(join(out, 'gateway', 'main.mjs'), {
        PORT: String(port),
        REDIS_URL: TEST_REDIS_URL,
        REDIS_KEY_PREFIX: `img${randomBytes(3).toString('hex')}:`,
        ADMIN_TOKEN: randomBytes(16).toString('hex'),
        IDENTITY_TOKEN_SECRET: secret,
        CRM_URL: crmUrl,
        TASKS_URL: crmUrl,
        CHAT_URL: crmUrl,
        FILES_URL: crmUrl,
        WEBHOOKS_URL: crmUrl,
        CRM_GRPC_URL: `127.0.0.1:${crmPorts.grpc}`,
        LOG_LEVEL: 'warn',
      });
      children.push(gateway);
      const base = `http://127.0.0.1:${port}`;
      await waitReady(base, 60_000).catch(() => undefined);
      expect((await fetch(`${base}/healthz`)).status).to.equal(200);
      const refused = await fetch(`${base}/integrations/external/leads`);
      expect(refused.status).to.equal(401);
      expect((await fetch(`${base}/docs`)).status).to.equal(200);
    });
  });

  describe('compose.yaml', () => {
    const compose = parse(readFileSync(join(REPO_ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as {
      services: Record<
        string,
        {
          build?: { context: string; dockerfile: string };
          environment?: Record<string, string>;
          depends_on?: Record<string, { condition: string }>;
          healthcheck?: unknown;
          image?: string;
        }
      >;
    };
    const resolveEnv = (env: Record<string, string> = {}) =>
      Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]));

    it('brings up Postgres, Redis, NATS with JetStream and every deployable from its Dockerfile', () => {
      expect(Object.keys(compose.services).sort()).to.deep.equal([
        'chat',
        'crm',
        'files',
        'gateway',
        'nats',
        'postgres',
        'redis',
        'tasks',
        'webhooks',
      ]);
      for (const name of DEPLOYABLES) {
        expect(compose.services[name]?.build, name).to.deep.equal({ context: '.', dockerfile: `${dirOf(name)}/Dockerfile` });
      }
      expect(JSON.stringify(compose.services.nats)).to.include('-js');
    });

    it('waits on health: every dependency named exists and has a health check (the images have theirs)', () => {
      for (const [name, s] of Object.entries(compose.services)) {
        for (const [dep, { condition }] of Object.entries(s.depends_on ?? {})) {
          expect(compose.services, `${name} → ${dep}`).to.have.property(dep);
          expect(condition).to.equal('service_healthy');
          const target = compose.services[dep];
          expect(Boolean(target?.healthcheck || target?.build), `${dep} has a health check`).to.equal(true);
        }
      }
    });

    it('gives every service an environment its own configuration schema accepts', () => {
      for (const [name, def] of Object.entries(definitions)) {
        const env = { ...def.defaults, ...resolveEnv(compose.services[name]?.environment) };
        expect(() => loadConfig(def.configSchema ?? serviceConfigSchema, env), name).to.not.throw();
      }
      const gateway = loadConfig(gatewayConfigSchema, resolveEnv(compose.services.gateway?.environment));
      for (const name of ['crm', 'tasks', 'chat', 'files', 'webhooks'] as const) {
        const port = { crm: 8081, tasks: 8082, chat: 8083, files: 8084, webhooks: 8085 }[name];
        const key = `${name.toUpperCase()}_URL` as keyof typeof gateway;
        expect(gateway[key]).to.equal(`http://${name}:${port}`);
        const dockerfile = readFileSync(resolve(REPO_ROOT, dirOf(name), 'Dockerfile'), 'utf8');
        expect(dockerfile, `${name} listens where the gateway looks`).to.include(`HTTP_PORT=${port}`);
      }
    });
  });
});
