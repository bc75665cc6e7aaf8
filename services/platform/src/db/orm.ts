import type { Constructor } from '@mikro-orm/core';
import type { Migration } from '@mikro-orm/migrations';
import { Migrator } from '@mikro-orm/migrations';
import { type EntityManager, MikroORM, type Options } from '@mikro-orm/postgresql';
import pg from 'pg';
import { releaseClientsThatEnd } from './pool.js';

export type { EntityManager };
export type Orm = MikroORM;

export interface DbDefinition {
  schema: string;
  entities: NonNullable<Options['entities']>;
  migrations: Constructor<Migration>[];
}

export interface OrmOptions {
  url: string;
  /** Its tables and its migrations table live there. */
  schema: string;
  entities: NonNullable<Options['entities']>;
  migrations: Constructor<Migration>[];
  migrationsPath?: string;
  poolMax?: number;
}

export function ormConfig(o: OrmOptions): Options {
  return {
    clientUrl: o.url,
    // Raw SQL names tables unqualified; a client whose connection drops mid-transaction goes back to the pool.
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

/** Safe to run from several replicas at once. */
export async function migrate(orm: MikroORM, schema: string): Promise<void> {
  // A session lock on its own connection until the migrations commit serializes replicas that start together.
  const lock = new pg.Client({ connectionString: orm.config.get('clientUrl') });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock(hashtext($1))', [`migrate:${schema}`]);
    await lock.query(`create schema if not exists "${schema}"`);
    await orm.migrator.up();
  } finally {
    await lock.end();
  }
}

export async function pingDatabase(orm: MikroORM): Promise<void> {
  await orm.em.fork().execute('select 1');
}
