import type { Pool, PoolClient } from 'pg';

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
