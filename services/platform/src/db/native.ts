import { type EntityName, UnderscoreNamingStrategy } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Pool, PoolClient, QueryResultRow } from 'pg';

/**
 * The `pg` pool under a service's MikroORM (same connections, DB_POOL_MAX, search_path and broken-client
 * handling). Hot paths send a few fixed statements straight to it, with bound parameters and a statement name
 * (prepared once per connection, planned once): MikroORM inlines every value into the SQL text and goes
 * through its unit of work, which costs more CPU than the statements themselves (decision 0010).
 */
export function nativePool(orm: MikroORM): Promise<Pool> {
  // MikroORM's PostgreSqlConnection.getNativeClient(): the pool it created (and connects it when needed).
  return (orm.em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }).getNativeClient();
}

/** What a store's functions run on: the pool or a transaction's client (inTransaction). */
export type Queryable = Pick<PoolClient, 'query'>;

/** Work to run once the transaction open on each client (by inTransaction) has committed. */
const committing = new WeakMap<PoolClient, (() => void)[]>();

/**
 * Runs `then` once what `db` wrote is committed: after the commit of the transaction inTransaction has open on it, or
 * at once when `db` is the pool or a client in autocommit (the statement that returned is committed). Nothing runs
 * for a transaction that rolls back.
 */
export function afterCommit(db: Pick<PoolClient, 'query'>, then: () => void): void {
  const queued = committing.get(db as PoolClient);
  if (queued) queued.push(then);
  else then();
}

/** Runs `work` in a transaction on one client of the pool; rolls back and rethrows on any error. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  const after: (() => void)[] = [];
  try {
    await client.query('begin');
    committing.set(client, after);
    const result = await work(client);
    await client.query('commit');
    committing.delete(client);
    for (const then of after) then();
    return result;
  } catch (err) {
    await client.query('rollback').catch(() => {
      broken = true;
    });
    throw err;
  } finally {
    committing.delete(client);
    client.release(broken);
  }
}

/** A named statement: prepared on each connection the first time it runs there, then only bound and executed. */
export interface Statement {
  name: string;
  text: string;
}

export const statement = (name: string, text: string): Statement => ({ name, text });

export async function run<R extends QueryResultRow>(db: Pool | PoolClient, st: Statement, values: unknown[]): Promise<R[]> {
  return (await db.query<R>({ name: st.name, text: st.text, values })).rows;
}

interface ColumnProp {
  name: string;
  column: string;
  kind: 'date' | 'number' | 'other';
}

/**
 * The columns of an entity as MikroORM maps them, for raw SQL that yields entity-shaped objects: a select list
 * (`alias.company_id as "companyId", ...`), a `json_build_object(...)` of a row, and `hydrate` to turn a JSON row
 * back into the entity's runtime types (dates, decimals). One source of truth: the entity definition.
 */
export class EntityColumns<T> {
  private readonly props: ColumnProp[];

  /** `only`: these properties alone (the columns another table shares with this entity's, read from that table). */
  constructor(orm: MikroORM, entity: EntityName<T>, only?: readonly string[]) {
    const meta = orm.getMetadata().get(entity);
    this.props = meta.props
      .filter((p) => p.kind === 'scalar' && p.persist !== false && p.fieldNames?.length === 1)
      .filter((p) => !only || only.includes(p.name))
      .map((p) => ({
        name: p.name,
        column: p.fieldNames[0] as string,
        kind: p.runtimeType === 'Date' ? 'date' : /^(numeric|decimal|bigint|int8)/.test(p.columnTypes?.[0] ?? '') ? 'number' : 'other',
      }));
  }

  /** The column names, in the entity's order (for an insert's column list). */
  columns(): string[] {
    return this.props.map((p) => p.column);
  }

  /** `a.id as "id", a.company_id as "companyId", ...`; decimals and bigints as float8, so pg returns numbers. */
  select(alias: string): string {
    return this.props.map((p) => `${this.expr(alias, p)} as "${p.name}"`).join(', ');
  }

  /** `json_build_object('id', a.id, 'companyId', a.company_id, ...)`. */
  json(alias: string): string {
    return `json_build_object(${this.props.map((p) => `'${p.name}', ${this.expr(alias, p)}`).join(', ')})`;
  }

  /** The entity as a row keyed by column names (for `jsonb_populate_record(null::table, $n)`); absent values are null. */
  row(entity: T): Record<string, unknown> {
    const e = entity as Record<string, unknown>;
    return Object.fromEntries(this.props.map((p) => [p.column, e[p.name] ?? null]));
  }

  /** A row of `json(...)` or `select(...)` (the pool under MikroORM returns timestamps as text): they become Dates. */
  hydrate(row: Record<string, unknown>): T {
    for (const p of this.props) {
      const v = row[p.name];
      if (p.kind === 'date' && typeof v === 'string') row[p.name] = new Date(v);
    }
    return row as T;
  }

  private expr(alias: string, p: ColumnProp): string {
    const col = `${alias}.${p.column}`;
    return p.kind === 'number' ? `${col}::float8` : col;
  }
}

/** The Postgres type a value of each MikroORM type is bound as (`$n::<type>`). */
const BOUND_AS: Record<string, string> = {
  UuidType: 'uuid',
  StringType: 'text',
  TextType: 'text',
  BooleanType: 'bool',
  SmallIntType: 'int2',
  IntegerType: 'int4',
  BigIntType: 'int8',
  DecimalType: 'numeric',
  DoubleType: 'float8',
  DateTimeType: 'timestamptz',
  JsonType: 'jsonb',
};

export interface DefinedColumn {
  property: string;
  column: string;
  /** The Postgres type its values are bound as (an array column: its column type, e.g. `uuid[]`). */
  pgType: string;
}

/**
 * The columns of an entity from its definition alone, for statement texts built at module load, before any ORM
 * exists: each scalar property's column under MikroORM's default naming (or its `fieldName`) and the type its
 * values are bound as. EntityColumns is the same from a running ORM's metadata; a service's test checks that the two
 * agree. An unknown property type throws, so it is added here rather than bound as the wrong type.
 */
export function definedColumns(entity: { meta: { properties: Record<string, unknown> } }): DefinedColumn[] {
  const naming = new UnderscoreNamingStrategy();
  return Object.entries(entity.meta.properties)
    .map(([property, options]) => ({
      property,
      o: options as { type?: unknown; columnType?: string; fieldName?: string; persist?: boolean; kind?: string },
    }))
    .filter(({ o }) => o.persist !== false && (o.kind === undefined || o.kind === 'scalar'))
    .map(({ property, o }) => {
      const type = typeof o.type === 'function' ? o.type.name : ((o.type as object | undefined)?.constructor?.name ?? String(o.type));
      const pgType = type === 'ArrayType' ? o.columnType : BOUND_AS[type];
      if (!pgType) throw new Error(`definedColumns: ${property} has a type (${type}) with no bound Postgres type`);
      return { property, column: o.fieldName ?? naming.propertyToColumnName(property), pgType };
    });
}
