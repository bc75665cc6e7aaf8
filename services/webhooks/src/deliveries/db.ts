import type { ServiceContext } from '@svc/platform/service';
import type { Pool, PoolClient } from 'pg';

/**
 * The `pg` pool under the service's MikroORM (same connections, DB_POOL_MAX, search_path and broken-client
 * handling). The delivery hot paths (issue, claim, record) send their few fixed statements straight to it,
 * with bound parameters: MikroORM would inline every value into the SQL text and go through the unit of work,
 * which cost more CPU than the statements themselves at a thousand deliveries a second.
 */
export function nativePool(ctx: ServiceContext): Promise<Pool> {
  // MikroORM's PostgreSqlConnection.getNativeClient(): the pool it created (and connects it when needed).
  return (ctx.orm.em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }).getNativeClient();
}

/** Runs `work` in a transaction on one client of the pool; rolls back and rethrows on any error. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (err) {
    await client.query('rollback').catch(() => {
      broken = true;
    });
    throw err;
  } finally {
    client.release(broken);
  }
}
