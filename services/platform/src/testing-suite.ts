import { randomBytes } from 'node:crypto';
import { credentials, loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { OpsServiceClient } from '@svc/proto/platform/v1/ops';
import { expect } from 'chai';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import pg from 'pg';
import type { serviceConfigSchema } from './config.js';
import { callUnary } from './grpc/server.js';
import { type RunningService, type ServiceDefinition, startService } from './service.js';
import { createTestDatabase, randomSuffix, TEST_NATS_URL, type TestDatabase } from './testing.js';

export interface ServiceUnderTest {
  running: RunningService;
  db: TestDatabase;
  env: Record<string, string>;
}

/** Port 0, a fresh database and a stream of this run only. */
export async function serviceTestEnv(extra: Record<string, string> = {}): Promise<{ env: Record<string, string>; db: TestDatabase }> {
  const db = await createTestDatabase();
  const run = randomSuffix();
  return {
    db,
    env: {
      DATABASE_URL: db.url,
      NATS_URL: TEST_NATS_URL,
      NATS_STREAM: `T_${run}`,
      EVENT_SUBJECT_PREFIX: `t${run}`,
      IDENTITY_TOKEN_SECRET: randomBytes(32).toString('hex'),
      HTTP_PORT: '0',
      GRPC_PORT: '0',
      METRICS_PORT: '0',
      DB_POOL_MAX: '4',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      ...extra,
    },
  };
}

/** Checked against the real service. */
export function describePlatformContract<S extends typeof serviceConfigSchema, D>(
  def: ServiceDefinition<S, D>,
  options: { env?: () => Record<string, string> } = {},
): void {
  describe(`${def.name}: platform contract`, () => {
    let sut: ServiceUnderTest;
    before(async () => {
      const { env, db } = await serviceTestEnv(options.env?.());
      sut = { running: (await startService(def, env)) as RunningService, db, env };
    });
    after(async () => {
      await sut?.running.stop();
      await sut?.db.drop();
    });

    it(`migrates its own schema "${def.db.schema}" with an outbox and a migrations table`, async () => {
      const c = new pg.Client({ connectionString: sut.db.url });
      await c.connect();
      try {
        const { rows } = await c.query<{ table_name: string }>('select table_name from information_schema.tables where table_schema = $1', [
          def.db.schema,
        ]);
        const tables = rows.map((r) => r.table_name);
        expect(tables).to.include.members(['outbox', 'mikro_orm_migrations']);
      } finally {
        await c.end();
      }
    });

    it('answers /healthz and /readyz without identity, and /metrics on its metrics port only', async () => {
      expect((await fetch(`${sut.running.httpUrl}/healthz`)).status).to.equal(200);
      const ready = await fetch(`${sut.running.httpUrl}/readyz`);
      expect(ready.status).to.equal(200);
      expect(((await ready.json()) as { checks: Record<string, string> }).checks).to.include({ postgres: 'ok', nats: 'ok' });
      expect(await (await fetch(`${sut.running.metricsUrl}/metrics`)).text()).to.contain(`service="${def.name}"`);
      expect(sut.running.metricsUrl).not.to.equal(sut.running.httpUrl);
      const onHttp = await fetch(`${sut.running.httpUrl}/metrics`);
      expect(onHttp.status).to.be.oneOf([401, 404]);
      expect(await onHttp.text()).not.to.contain('http_request_duration_seconds');
    });

    it('answers any other route without a verified identity token with 401 and the spec error body', async () => {
      for (const path of ['/integrations/external/anything', '/admin/v1/companies']) {
        const res = await fetch(`${sut.running.httpUrl}${path}`, { headers: { 'x-svc-identity': 'forged' } });
        expect(res.status).to.equal(401);
        expect(await res.json()).to.deep.include({ statusCode: 401, error: 'Unauthorized' });
      }
    });

    it('serves grpc.health.v1 (SERVING) and platform.v1.OpsService', async () => {
      // biome-ignore lint/suspicious/noExplicitAny: a dynamically loaded package
      const pkg = loadPackageDefinition(loadSync(healthProtoPath, { enums: String })) as any;
      const health = new pkg.grpc.health.v1.Health(sut.running.grpcAddress, credentials.createInsecure());
      const res = await new Promise<{ status: string }>((resolve, reject) =>
        health.check({ service: '' }, { deadline: new Date(Date.now() + 2000) }, (err: Error | null, r: { status: string }) =>
          err ? reject(err) : resolve(r),
        ),
      );
      health.close();
      expect(res.status).to.equal('SERVING');
      const ops = new OpsServiceClient(sut.running.grpcAddress, credentials.createInsecure());
      try {
        expect(await callUnary(ops, ops.getOutboxStatus, {})).to.include({ service: def.name, pending: 0 });
      } finally {
        ops.close();
      }
    });
  });
}
