import pg, { type Pool, type PoolClient } from 'pg';
import type { Logger } from '../logging.js';

/**
 * Releases a client as broken when its connection ends while checked out: Kysely releases a transaction's client only
 * after COMMIT or ROLLBACK succeeds, so a dropped connection would leak it and, in time, starve the pool.
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
 * For work that must not wait behind the service's own traffic (decision 0145). Idle errors are logged: unheard, they
 * would end the process.
 */
export function separatePool(o: { url: string; schema: string; max: number; logger: Logger; what: string }): Pool {
  const pool = new pg.Pool({ connectionString: o.url, options: `-c search_path=${o.schema}`, max: o.max });
  releaseClientsThatEnd(pool);
  pool.on('error', (err) => o.logger.warn({ err }, `${o.what} pool: an idle connection failed`));
  return pool;
}
