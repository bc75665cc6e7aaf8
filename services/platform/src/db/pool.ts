import pg, { type Pool, type PoolClient } from 'pg';
import type { Logger } from '../logging.js';

/**
 * Gives a client back to the pool (as broken, so the pool drops it) when its connection ends while it is
 * checked out. Kysely, under MikroORM, releases a transaction's client only after its COMMIT or ROLLBACK
 * succeeds: when Postgres restarts, fails over or drops the connection in the middle of a transaction
 * both fail, the client stays checked out for ever, and once DB_POOL_MAX of them have leaked every later
 * query of the process waits for a free client that never comes. The holder's own release, should it
 * still come, does nothing.
 */
export function releaseClientsThatEnd(pool: Pool): void {
  const checkedOut = new Set<PoolClient>();
  pool.on('acquire', (client) => checkedOut.add(client));
  pool.on('release', (_err, client) => checkedOut.delete(client));
  pool.on('connect', (client) => {
    client.once('end', () => {
      if (!checkedOut.delete(client)) return;
      const release = client.release;
      client.release = () => undefined;
      release(new Error('connection ended while checked out'));
    });
  });
}

/**
 * A small `pg` pool beside the service's MikroORM one, on the same database and schema (search_path), for work that
 * must not wait behind the service's own traffic for a connection (crm's key look-ups, decision 0145). An idle
 * connection that breaks (Postgres restarting) is dropped and logged: unheard, the pool's error would end the process.
 */
export function separatePool(o: { url: string; schema: string; max: number; logger: Logger; what: string }): Pool {
  const pool = new pg.Pool({ connectionString: o.url, options: `-c search_path=${o.schema}`, max: o.max });
  releaseClientsThatEnd(pool);
  pool.on('error', (err) => o.logger.warn({ err }, `${o.what} pool: an idle connection failed`));
  return pool;
}
