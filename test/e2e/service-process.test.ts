import { dbDefinition } from '@svc/crm';
import type { TestDatabase } from '@svc/platform/testing';
import { serviceTestEnv } from '@svc/platform/testing-suite';
import { expect } from 'chai';
import { type Child, loggedPort, spawnEntry, waitReady } from '../support/processes.js';

/** What only a real process shows: start-up config errors, the migration entry point, JSON logs, SIGTERM. */
describe('a service process: config errors, migration job, logs, graceful shutdown', () => {
  let db: TestDatabase;
  let env: Record<string, string>;

  before(async () => {
    ({ db, env } = await serviceTestEnv({ LOG_LEVEL: 'info' }));
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
    let metricsUrl: string;
    before(async () => {
      crm = spawnEntry('services/crm/src/main.ts', env);
      url = `http://127.0.0.1:${await loggedPort(crm, 'httpPort')}`;
      metricsUrl = `http://127.0.0.1:${await loggedPort(crm, 'metricsPort')}`;
      await waitReady(url);
    });
    after(() => crm?.stop('SIGKILL'));

    it('answers /healthz, /readyz with each dependency, and Prometheus /metrics on METRICS_PORT, not on its HTTP port', async () => {
      expect(await (await fetch(`${url}/healthz`)).json()).to.deep.equal({ status: 'ok' });
      const ready = await (await fetch(`${url}/readyz`)).json();
      expect(ready).to.deep.equal({ status: 'ready', checks: { postgres: 'ok', nats: 'ok' } });
      const metrics = await (await fetch(`${metricsUrl}/metrics`)).text();
      expect(metrics).to.contain('http_request_duration_seconds').and.contain('outbox_published_total').and.contain('service="crm"');
      expect(metricsUrl).not.to.equal(url);
      // on the HTTP port /metrics is one more route behind the identity token
      expect((await fetch(`${url}/metrics`)).status).to.equal(401);
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
