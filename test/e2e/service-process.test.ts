import { randomBytes } from 'node:crypto';
import { credentials, loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { dbDefinition } from '@svc/crm';
import { callUnary } from '@svc/platform/grpc/server';
import { createTestDatabase, randomSuffix, TEST_NATS_URL, type TestDatabase } from '@svc/platform/testing';
import { OpsServiceClient } from '@svc/proto/platform/v1/ops';
import { expect } from 'chai';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { type Child, loggedPort, spawnEntry, waitReady } from '../support/processes.js';

describe('a service process: config, migrations, health, metrics, gRPC health, graceful shutdown', () => {
  let db: TestDatabase;
  let env: Record<string, string>;

  before(async () => {
    db = await createTestDatabase();
    const run = randomSuffix();
    env = {
      DATABASE_URL: db.url,
      NATS_URL: TEST_NATS_URL,
      NATS_STREAM: `T_${run}`,
      EVENT_SUBJECT_PREFIX: `t${run}`,
      IDENTITY_TOKEN_SECRET: randomBytes(32).toString('hex'),
      HTTP_PORT: '0',
      GRPC_PORT: '0',
      LOG_LEVEL: 'info',
    };
  });
  after(() => db?.drop());

  it('stops at start with exit 1 and a message naming a missing or malformed variable', async () => {
    const { DATABASE_URL: _, ...missing } = env;
    const a = spawnEntry('services/crm/src/main.ts', missing);
    expect(await a.exited).to.equal(1);
    expect(a.output()).to.contain('DATABASE_URL: is required but not set');
    const b = spawnEntry('services/crm/src/main.ts', { ...env, NATS_URL: 'not a host', IDENTITY_TOKEN_SECRET: 'short' });
    expect(await b.exited).to.equal(1);
    expect(b.output()).to.contain('NATS_URL').and.contain('IDENTITY_TOKEN_SECRET');
    const g = spawnEntry('gateway/src/main.ts', { REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(await g.exited).to.equal(1);
    expect(g.output()).to.contain('ADMIN_TOKEN').and.contain('CRM_GRPC_URL');
  });

  it('migrates a schema from a migration job entry point, and again as a no-op', async () => {
    for (let i = 0; i < 2; i++) {
      const m = spawnEntry('services/crm/src/migrate.ts', { DATABASE_URL: db.url });
      expect(await m.exited, m.output()).to.equal(0);
      expect(m.output()).to.contain(`"migrations":${dbDefinition.migrations.length}`);
    }
  });

  describe('running', () => {
    let crm: Child;
    let url: string;
    let grpcPort: number;
    before(async () => {
      crm = spawnEntry('services/crm/src/main.ts', env);
      url = `http://127.0.0.1:${await loggedPort(crm, 'httpPort')}`;
      grpcPort = await loggedPort(crm, 'grpcPort' as 'port');
      await waitReady(url);
    });
    after(() => crm?.stop('SIGKILL'));

    it('answers /healthz, /readyz with each dependency, and Prometheus /metrics without identity', async () => {
      expect(await (await fetch(`${url}/healthz`)).json()).to.deep.equal({ status: 'ok' });
      const ready = await (await fetch(`${url}/readyz`)).json();
      expect(ready).to.deep.equal({ status: 'ready', checks: { postgres: 'ok', nats: 'ok' } });
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).to.contain('http_request_duration_seconds').and.contain('outbox_published_total').and.contain('service="crm"');
    });

    it('serves grpc.health.v1 and the shared OpsService', async () => {
      const pkg = loadPackageDefinition(loadSync(healthProtoPath, { enums: String })) as any;
      const health = new pkg.grpc.health.v1.Health(`127.0.0.1:${grpcPort}`, credentials.createInsecure());
      const res = await new Promise<{ status: string }>((resolve, reject) =>
        health.check({ service: '' }, { deadline: new Date(Date.now() + 2000) }, (err: Error | null, r: { status: string }) =>
          err ? reject(err) : resolve(r),
        ),
      );
      expect(res.status).to.equal('SERVING');
      health.close();
      const ops = new OpsServiceClient(`127.0.0.1:${grpcPort}`, credentials.createInsecure());
      const status = await callUnary(ops, ops.getOutboxStatus, {});
      expect(status).to.include({ service: 'crm', pending: 0, oldest_pending_age_ms: 0 });
      ops.close();
    });

    it('writes structured JSON logs', () => {
      const line = crm
        .output()
        .split('\n')
        .find((l) => l.includes('service started'));
      const entry = JSON.parse(line!);
      expect(entry).to.include({ service: 'crm', msg: 'service started' });
      expect(entry.time).to.match(/^\d{4}-\d\d-\d\dT/);
    });

    it('stops gracefully on SIGTERM with exit 0', async () => {
      expect(await crm.stop('SIGTERM')).to.equal(0);
      expect(crm.output()).to.contain('service stopped');
    });
  });
});
