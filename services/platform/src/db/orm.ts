import type { Constructor } from '@mikro-orm/core';
import type { Migration } from '@mikro-orm/migrations';
import { Migrator } from '@mikro-orm/migrations';
import { type EntityManager, MikroORM, type Options } from '@mikro-orm/postgresql';
import { releaseClientsThatEnd } from './pool.js';

export type { EntityManager };
export type Orm = MikroORM;

export interface OrmOptions {
  url: string;
  /** The service's own Postgres schema: its tables and its migrations table live there. */
  schema: string;
  entities: NonNullable<Options['entities']>;
  migrations: Constructor<Migration>[];
  migrationsPath?: string;
  poolMax?: number;
}

export function ormConfig(o: OrmOptions): Options {
  return {
    clientUrl: o.url,
    // Raw SQL of a service names its tables unqualified: each pooled connection's search_path is its schema.
    // A client whose connection drops mid-transaction goes back to the pool (see releaseClientsThatEnd).
    driverOptions: { options: `-c search_path=${o.schema}`, onPoolCreated: releaseClientsThatEnd },
    schema: o.schema,
    entities: o.entities,
    extensions: [Migrator],
    migrations: {
      tableName: 'mikro_orm_migrations',
      schema: o.schema,
      migrationsList: o.migrations,
      path: o.migrationsPath,
      pathTs: o.migrationsPath,
      emit: 'ts',
      snapshot: true,
      snapshotOnMigrate: false,
      snapshotName: `.snapshot-${o.schema}`,
      silent: true,
    },
    pool: { min: 0, max: o.poolMax ?? 10 },
    debug: false,
    allowGlobalContext: false,
    ensureDatabase: false,
  };
}

export async function createOrm(o: OrmOptions): Promise<MikroORM> {
  return MikroORM.init(ormConfig(o));
}

/** Brings the service's schema to the newest committed migration. Safe to run from several replicas at once. */
export async function migrate(orm: MikroORM, schema: string): Promise<void> {
  const em = orm.em.fork();
  // One lock per schema serializes replicas that start together; the loser finds nothing pending.
  await em.transactional(async (tx) => {
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`migrate:${schema}`]);
    await tx.execute(`create schema if not exists "${schema}"`);
  });
  await orm.migrator.up();
}
