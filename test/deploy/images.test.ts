/**
 * The container images, checked without a container runtime (none can pull the Node base image here): each
 * deployable's Dockerfile is read (stages, base image, user, health check, entry point, ports), its build stage is
 * replayed the way the Dockerfile runs it (only the files it COPYs, then its bundle RUN), and the runtime stage's
 * content is started with node, with compose.yaml's environment, against the real Postgres, NATS and Redis: each
 * service's migrations run, every process answers /healthz, the image's HEALTHCHECK command passes, and the bundled
 * gateway is ready over the bundled services and serves an admin call end to end.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectNats } from '@svc/platform/events/nats';
import { createLogger } from '@svc/platform/logging';
import { createTestDatabase, eventually, randomSuffix, TEST_NATS_URL, TEST_REDIS_URL, type TestDatabase } from '@svc/platform/testing';
import { expect } from 'chai';
import pg from 'pg';
import { parse } from 'yaml';
import { freePort } from '../support/stack.js';
import { all, copyParts, envOf, execForm, readDockerfile, type Stage } from './dockerfile.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const DEPLOYABLES = {
  crm: { dir: 'services/crm', http: 8081, grpc: 9081 },
  tasks: { dir: 'services/tasks', http: 8082, grpc: 9082 },
  chat: { dir: 'services/chat', http: 8083, grpc: 9083 },
  files: { dir: 'services/files', http: 8084, grpc: 9084 },
  webhooks: { dir: 'services/webhooks', http: 8085, grpc: 9085 },
  gateway: { dir: 'gateway', http: 8080, grpc: undefined },
} as const;
type Name = keyof typeof DEPLOYABLES;
const NAMES = Object.keys(DEPLOYABLES) as Name[];
const SERVICES = NAMES.filter((n) => n !== 'gateway');

const dockerfilePath = (name: Name) => join(repoRoot, DEPLOYABLES[name].dir, 'Dockerfile');
const compose = () => parse(readFileSync(join(repoRoot, 'compose.yaml'), 'utf8'), { merge: true });
const buildStage = (stages: Stage[]) => stages[0] as Stage;
const runtimeStage = (stages: Stage[]) => stages.at(-1) as Stage;
const dockerignore = readFileSync(join(repoRoot, '.dockerignore'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() && !l.startsWith('#'));

describe('deploy: container images (Dockerfiles, built the way they build)', function () {
  this.timeout(120_000);

  for (const name of NAMES) {
    const { http, grpc } = DEPLOYABLES[name];
    describe(`${name}/Dockerfile`, () => {
      const stages = readDockerfile(dockerfilePath(name));
      const runtime = runtimeStage(stages);

      it('is multi-stage on the official Node 22 image', () => {
        expect(stages.length).to.be.at.least(2);
        for (const s of stages) expect(s.image).to.match(/^node:22(-[a-z0-9.-]+)?$/);
        expect(buildStage(stages).name).to.equal('build');
      });

      it('runs the bundle as the non-root node user, from /app, with no source and no node_modules copied in', () => {
        const users = all(runtime, 'USER').map((i) => i.args);
        expect(users).to.deep.equal(['node']);
        expect(all(runtime, 'WORKDIR').map((i) => i.args)).to.deep.equal(['/app']);
        expect(execForm((all(runtime, 'CMD')[0] ?? { args: '' }).args)).to.deep.equal(['node', 'main.mjs']);
        const copies = all(runtime, 'COPY').map((i) => copyParts(i.args));
        expect(copies).to.have.lengthOf(1);
        expect(copies[0]).to.include({ from: 'build', dest: './' });
        expect(copies[0]?.sources).to.deep.equal([`/out/${name}/`]);
        // nothing installed at run time; files only makes its storage folder its user's
        const runs = all(runtime, 'RUN').map((i) => i.args);
        expect(runs).to.deep.equal(name === 'files' ? ['mkdir -p /data/files && chown node:node /data/files'] : []);
      });

      it('declares its ports and binds them on every interface', () => {
        const env = envOf(runtime);
        expect(env.HOST).to.equal('0.0.0.0');
        expect(env.NODE_ENV).to.equal('production');
        if (grpc) expect(env).to.include({ HTTP_PORT: String(http), GRPC_PORT: String(grpc) });
        else expect(env).to.include({ PORT: String(http) });
        const exposed = all(runtime, 'EXPOSE').flatMap((i) => i.args.split(' '));
        expect(exposed).to.deep.equal(grpc ? [String(http), String(grpc)] : [String(http)]);
      });

      it('has a HEALTHCHECK on GET /healthz of its HTTP port', () => {
        const checks = all(runtime, 'HEALTHCHECK');
        expect(checks).to.have.lengthOf(1);
        const cmd = execForm((checks[0] as { args: string }).args);
        expect(cmd[0]).to.equal('node');
        expect(cmd.join(' '))
          .to.contain(`process.env.${grpc ? 'HTTP_PORT' : 'PORT'}`)
          .and.to.contain('/healthz');
      });

      it('COPYs only paths that exist and that .dockerignore keeps, every workspace manifest before npm ci', () => {
        const build = buildStage(stages);
        const sources = all(build, 'COPY').flatMap((i) => copyParts(i.args).sources);
        for (const src of sources) {
          expect(existsSync(join(repoRoot, src)), src).to.equal(true);
          expect(
            dockerignore.some((p) => p.replace(/^\*\*\//, '') === src.split('/')[0]),
            `${src} is ignored`,
          ).to.equal(false);
        }
        const workspaces: string[] = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).workspaces;
        const ci = build.instructions.findIndex((i) => i.keyword === 'RUN' && /^npm ci\b/.test(i.args));
        expect(ci, 'npm ci').to.be.above(0);
        const beforeCi = build.instructions.slice(0, ci).flatMap((i) => (i.keyword === 'COPY' ? copyParts(i.args).sources : []));
        expect(beforeCi).to.include.members(['package.json', 'package-lock.json', ...workspaces.map((w) => `${w}/package.json`)]);
        const bundle = all(build, 'RUN').map((i) => i.args);
        expect(bundle.at(-1)).to.equal(`node deploy/scripts/bundle.mjs ${name} --out /out`);
      });
    });
  }

  describe('the build stages replayed, and the runtime content started with compose.yaml environment', () => {
    const apps = {} as Record<Name, string>;
    const running: ChildProcess[] = [];
    const ports = {} as Record<Name, { http: number; grpc?: number }>;
    let work = '';
    let db: TestDatabase;
    const run = randomSuffix();
    const stream = `IMG_${run}`;
    const secrets = {
      POSTGRES_PASSWORD: 'unused-here',
      IDENTITY_TOKEN_SECRET: `s${run}`.padEnd(48, 'x'),
      ADMIN_TOKEN: `a${run}`.padEnd(24, 'y'),
    };

    before(async function () {
      this.timeout(300_000);
      work = mkdtempSync(join(tmpdir(), 'images-test-'));
      db = await createTestDatabase('svc_img');
      for (const name of NAMES) apps[name] = await replayBuild(name, join(work, name));
      for (const name of NAMES) {
        const grpcPort = DEPLOYABLES[name].grpc ? await freePort() : undefined;
        ports[name] = { http: await freePort(), ...(grpcPort ? { grpc: grpcPort } : {}) };
      }
    });

    after(async () => {
      await Promise.all(running.map((p) => stop(p)));
      const nats = await connectNats(TEST_NATS_URL, 'images-test-cleanup', createLogger('test', 'silent'));
      await nats.jsm.streams.delete(stream).catch(() => undefined);
      await nats.nc.close();
      await db?.drop();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    /** compose.yaml's environment of a service, interpolated, its addresses pointed at this machine's servers. */
    function composeEnv(service: string): Record<string, string> {
      const env: Record<string, string | number> = compose().services[service].environment;
      const addresses = new Map<string, string>();
      for (const n of NAMES) {
        addresses.set(`${n}:${DEPLOYABLES[n].http}`, `127.0.0.1:${ports[n].http}`);
        if (DEPLOYABLES[n].grpc) addresses.set(`${n}:${DEPLOYABLES[n].grpc}`, `127.0.0.1:${ports[n].grpc}`);
      }
      const out: Record<string, string> = {};
      for (const [k, raw] of Object.entries(env)) {
        let v = String(raw).replace(/\$\{(\w+)(?::([?-])([^}]*))?\}/g, (_m, key: string, op?: string, word?: string) => {
          const given = (secrets as Record<string, string>)[key];
          if (given !== undefined) return given;
          if (op === '-') return word ?? '';
          throw new Error(`compose.yaml: ${service}.${k} needs ${key}`);
        });
        if (k === 'DATABASE_URL') {
          expect(v).to.equal(`postgres://platform:${secrets.POSTGRES_PASSWORD}@postgres:5432/platform`);
          v = db.url;
        } else if (k === 'NATS_URL') {
          expect(v).to.equal('nats:4222');
          v = TEST_NATS_URL;
        } else if (k === 'FILES_LOCAL_DIR') {
          expect(v).to.equal('/data/files'); // the image's folder, a volume in compose
          v = join(work, 'files-data');
        } else if (k === 'REDIS_URL') {
          expect(v).to.equal('redis://redis:6379');
          v = TEST_REDIS_URL;
        } else {
          for (const [from, to] of addresses) v = v.replace(new RegExp(`(^|//)${from}$`), `$1${to}`);
        }
        out[k] = v;
      }
      return out;
    }

    /** The container's environment: the image's ENV, then compose's, then this run's ports and isolation. */
    function containerEnv(name: Name, service: string): NodeJS.ProcessEnv {
      const { http, grpc } = ports[name];
      return {
        PATH: process.env.PATH,
        ...envOf(runtimeStage(readDockerfile(dockerfilePath(name)))),
        ...composeEnv(service),
        HOST: '127.0.0.1',
        ...(grpc ? { HTTP_PORT: String(http), GRPC_PORT: String(grpc) } : { PORT: String(http) }),
        // a stream and keys of this run only, never the shared EVENTS stream of the machine
        ...(name === 'gateway' ? { REDIS_KEY_PREFIX: `img${run}:` } : { NATS_STREAM: stream, EVENT_SUBJECT_PREFIX: `img${run}` }),
        LOG_LEVEL: 'warn',
      };
    }

    it('bundles each deployable into plain JavaScript: no TypeScript and no node_modules beside it', () => {
      for (const name of NAMES) {
        const files = readdirSync(apps[name], { recursive: true }).map(String);
        expect(files, name).to.include('main.mjs');
        if (name !== 'gateway') expect(files, name).to.include.members(['migrate.mjs', 'replay.mjs']);
        expect(
          files.filter((f) => f.endsWith('.ts')),
          name,
        ).to.deep.equal([]);
        const modules = files.filter((f) => f.startsWith('node_modules/') && f.split('/').length === 2);
        expect(modules, name).to.deep.equal(name === 'gateway' ? ['node_modules/swagger-ui-dist'] : []);
      }
    });

    it("runs each service's migrations with `node migrate.mjs` (compose's <name>-migrate), into its own schema", async function () {
      this.timeout(120_000);
      for (const name of SERVICES) {
        const r = await exec(['migrate.mjs'], apps[name], containerEnv(name, `${name}-migrate`));
        expect(r.code, `${name} migrate:\n${r.output}`).to.equal(0);
      }
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        for (const name of SERVICES) {
          const rows = await c.query(`select count(*)::int as n from "${name}".mikro_orm_migrations`);
          expect(rows.rows[0].n, name).to.be.above(0);
        }
      } finally {
        await c.end();
      }
    });

    it('starts every bundle with the image CMD; each answers /healthz and passes the image HEALTHCHECK', async function () {
      this.timeout(120_000);
      for (const name of [...SERVICES, 'gateway'] as Name[]) {
        const stages = readDockerfile(dockerfilePath(name));
        const cmd = execForm((all(runtimeStage(stages), 'CMD')[0] as { args: string }).args);
        const env = containerEnv(name, name);
        const child = spawn(process.execPath, cmd.slice(1), { cwd: apps[name], env, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr?.on('data', (d) => (stderr += d));
        running.push(child);
        await eventually(
          async () => {
            if (child.exitCode !== null) throw new Error(`${name} exited ${child.exitCode}: ${stderr}`);
            return (await fetch(`http://127.0.0.1:${ports[name].http}/healthz`)).status === 200;
          },
          30_000,
          100,
        ).catch((err: Error) => {
          throw new Error(`${name}: ${err.message}\n${stderr}`);
        });
        const check = execForm((all(runtimeStage(stages), 'HEALTHCHECK')[0] as { args: string }).args);
        const r = await exec(check.slice(1), apps[name], env);
        expect(r.code, `${name} HEALTHCHECK: ${r.output}`).to.equal(0);
      }
    });

    it("each service's replay.mjs (the operators' event replay) runs in the image and replays a company's events", async function () {
      this.timeout(60_000);
      for (const name of SERVICES) {
        const r = await exec(
          ['replay.mjs', '--company', '00000000-0000-4000-8000-000000000000', '--since', '2026-01-01T00:00:00Z'],
          apps[name],
          containerEnv(name, name),
        );
        expect(r.code, `${name} replay:\n${r.output}`).to.equal(0);
        expect(r.output, name).to.match(/"replayed":0/);
      }
    });

    it('the bundled gateway is ready over the bundled services and serves the admin API end to end', async function () {
      this.timeout(60_000);
      const gw = `http://127.0.0.1:${ports.gateway.http}`;
      const ready = await eventually(async () => {
        const r = await fetch(`${gw}/readyz`);
        return r.status === 200 ? ((await r.json()) as { upstreams: Record<string, string> }) : undefined;
      }, 30_000);
      expect(ready.upstreams).to.deep.equal({ crm: 'up', tasks: 'up', chat: 'up', files: 'up', webhooks: 'up' });
      const res = await fetch(`${gw}/admin/v1/companies`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secrets.ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Bundled Co', master_user: { name: 'Ana', email: `ana-${run}@example.com` } }),
      });
      expect(res.status, await res.clone().text()).to.equal(201);
      const body = (await res.json()) as { id: number; name: string };
      expect(body.name).to.equal('Bundled Co');
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        const rows = await c.query('select name from crm.companies where id = $1', [body.id]);
        expect(rows.rows).to.deep.equal([{ name: 'Bundled Co' }]);
      } finally {
        await c.end();
      }
      // the bundled gateway serves /docs from the swagger-ui files copied beside its bundle
      const css = await fetch(`${gw}/docs/swagger-ui.css`);
      expect(css.status).to.equal(200);
    });
  });
});

/**
 * The build stage, replayed: the files its COPYs take (node_modules as `npm ci` left them in the work tree, with the
 * workspace links only to what was copied), then its RUNs after npm ci, /out redirected. Returns the runtime's /app.
 */
async function replayBuild(name: Name, dir: string): Promise<string> {
  const src = join(dir, 'src');
  const out = join(dir, 'out');
  const build = buildStage(readDockerfile(dockerfilePath(name)));
  for (const i of all(build, 'COPY')) {
    const { sources, dest } = copyParts(i.args);
    for (const s of sources) {
      const target = dest.endsWith('/') ? join(src, dest, basename(s)) : join(src, dest);
      cpSync(join(repoRoot, s), target, { recursive: true, filter: (p) => !/[/\\](node_modules|dist)$/.test(p) });
    }
  }
  mkdirSync(join(src, 'node_modules', '@svc'), { recursive: true });
  for (const entry of readdirSync(join(repoRoot, 'node_modules'))) {
    if (entry === '@svc' || entry === '.bin') continue;
    symlinkSync(join(repoRoot, 'node_modules', entry), join(src, 'node_modules', entry));
  }
  for (const ws of readdirSync(join(repoRoot, 'node_modules', '@svc'))) {
    symlinkSync(readlinkSync(join(repoRoot, 'node_modules', '@svc', ws)), join(src, 'node_modules', '@svc', ws));
  }
  const runs = all(build, 'RUN').filter((i) => !/^npm ci\b/.test(i.args));
  for (const r of runs) {
    const argv = r.args.replace(/ \/out\b/, ` ${out}`).split(' ');
    expect(argv[0]).to.equal('node');
    const result = await exec(argv.slice(1), src, { PATH: process.env.PATH });
    expect(result.code, `${name}: RUN ${r.args}\n${result.output}`).to.equal(0);
  }
  return join(out, name);
}

function exec(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => resolveRun({ code, output }));
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(timer);
      r();
    });
    child.kill('SIGTERM');
  });
}
