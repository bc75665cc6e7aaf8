import net from 'node:net';
import { Metadata, type ServerUnaryCall, status } from '@grpc/grpc-js';
import { MikroORM } from '@mikro-orm/postgresql';
import { expect } from 'chai';
import pg from 'pg';
import { isStoreUnavailable } from '../src/errors.js';
import { unary } from '../src/grpc/server.js';
import { toAppError } from '../src/http/errors.js';
import { createLogger } from '../src/logging.js';

const logger = createLogger('test', 'silent');

/** A loopback port nothing listens on (taken and released). */
async function freePortForTest(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}
const where = { method: 'POST', path: '/x' };

/** What the driver and the ORM throw when Postgres is down or going away, as the request handler sees it. */
describe('a database that is down or restarting answers 503, not 500', () => {
  it('maps a refused connection of pg to 503 unavailable', async () => {
    const client = new pg.Client({
      connectionString: `postgres://postgres@127.0.0.1:${await freePortForTest()}/x`,
      connectionTimeoutMillis: 2000,
    });
    const err = await client.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isStoreUnavailable(err)).to.equal(true);
    const mapped = toAppError(err, logger, where);
    expect(mapped.kind).to.equal('unavailable');
    expect(mapped.message).to.equal('The service is temporarily unavailable; retry later');
  });

  it('maps the same failure wrapped by MikroORM to 503', async () => {
    const orm = await MikroORM.init({
      clientUrl: `postgresql://postgres@127.0.0.1:${await freePortForTest()}/x`,
      entities: [],
      discovery: { warnWhenNoEntities: false },
    });
    const err = await orm.em
      .fork()
      .getConnection()
      .execute('select 1')
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    await orm.close().catch(() => undefined);
    expect(err, 'the ORM failed to connect').to.be.instanceOf(Error);
    expect(toAppError(err, logger, where).kind).to.equal('unavailable');
  });

  it('maps a server shutting down (SQLSTATE 57P01) and a broken connection (class 08) to 503', () => {
    expect(
      toAppError(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }), logger, where).kind,
    ).to.equal('unavailable');
    expect(toAppError(Object.assign(new Error('connection failure'), { code: '08006' }), logger, where).kind).to.equal('unavailable');
    expect(toAppError(new Error('Connection terminated unexpectedly'), logger, where).kind).to.equal('unavailable');
    // What MikroORM threw while the restarted server was still recovering (seen in the reliability suite).
    const recovering = Object.assign(new Error('the database system is not yet accepting connections'), { name: 'DriverException' });
    expect(toAppError(recovering, logger, where).kind).to.equal('unavailable');
    expect(toAppError(new Error('x', { cause: Object.assign(new Error('y'), { code: '57P03' }) }), logger, where).kind).to.equal(
      'unavailable',
    );
  });

  it('leaves every other failure a 500, also SQL errors of the statement itself', () => {
    expect(toAppError(new Error('boom'), logger, where).kind).to.equal('internal');
    expect(toAppError(Object.assign(new Error('duplicate key'), { code: '23505' }), logger, where).kind).to.equal('internal');
    expect(toAppError(Object.assign(new Error('syntax error'), { code: '42601' }), logger, where).kind).to.equal('internal');
  });

  it('answers a gRPC call UNAVAILABLE, not INTERNAL, so the gateway answers 503', async () => {
    const codeOf = (err: Error) =>
      new Promise<number | undefined>((resolve) => {
        const handler = unary(logger, async () => {
          throw err;
        });
        // A hand-made call with only the request and its metadata, which is all the adapter reads.
        handler({ request: {}, metadata: new Metadata() } as unknown as ServerUnaryCall<unknown, unknown>, (e) =>
          resolve(e?.code ?? undefined),
        );
      });
    expect(await codeOf(new Error('the database system is not yet accepting connections'))).to.equal(status.UNAVAILABLE);
    expect(await codeOf(new Error('boom'))).to.equal(status.INTERNAL);
  });
});
