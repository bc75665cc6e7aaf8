import { type EntityName, UnderscoreNamingStrategy } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';

/**
 * The pool under a service's MikroORM. Hot paths send named, bound statements straight to it: MikroORM's inlining
 * and unit of work cost more CPU than the statements (decision 0010).
 */
export function nativePool(orm: MikroORM): Promise<Pool> {
  return (orm.em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }).getNativeClient();
}

/** The pool a service's stores run on, fetched once from its ORM and shared by every caller. */
export type PoolOf = () => Promise<Pool>;

export function poolOf(orm: MikroORM): PoolOf {
  let pool: Promise<Pool> | undefined;
  return () => {
    pool ??= nativePool(orm);
    return pool;
  };
}

/** What a store's functions run on: the pool or a transaction's client (inTransaction). */
export type Queryable = Pick<PoolClient, 'query'>;

const committing = new WeakMap<PoolClient, (() => void)[]>();

/**
 * Runs `then` once what `db` wrote is committed (at once for the pool or an autocommit client); never on rollback.
 */
export function afterCommit(db: Pick<PoolClient, 'query'>, then: () => void): void {
  const queued = committing.get(db as PoolClient);
  if (queued) queued.push(then);
  else then();
}

export function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  return transaction(pool, (client) => client.query('begin'), work);
}

/**
 * Reads that must agree with each other (a page and its total, records and their children) run in one read-only
 * repeatable-read transaction: every statement sees the same snapshot (decision 0259).
 */
export function inSnapshot<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  return transaction(pool, (client) => client.query('begin isolation level repeatable read read only'), work);
}

/**
 * The transaction both entry points share: `begin` opens it (and may run its first statement), `work` runs in it; a
 * commit runs the afterCommit callbacks, a failure rolls back, and a client whose rollback failed is not reused.
 */
async function transaction<B, T>(
  pool: Pool,
  begin: (client: PoolClient) => Promise<B>,
  work: (client: PoolClient, begun: B) => Promise<T>,
  onError: (client: PoolClient, err: unknown) => void = () => undefined,
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  const after: (() => void)[] = [];
  try {
    committing.set(client, after);
    const begun = await begin(client);
    const result = await work(client, begun);
    await client.query('commit');
    committing.delete(client);
    for (const then of after) then();
    return result;
  } catch (err) {
    await client.query('rollback').catch(() => {
      broken = true;
    });
    onError(client, err);
    throw err;
  } finally {
    committing.delete(client);
    client.release(broken);
  }
}

/** A statement prepared server-side by SQL `PREPARE` (once per connection), run by `EXECUTE name(args)`. */
export interface ServerStatement {
  /** An SQL identifier, quoted where it is used. */
  name: string;
  /** The parameters' types, `$1` first. */
  params: string[];
  text: string;
}

const preparedOn = new WeakMap<PoolClient, Set<string>>();

/**
 * As inTransaction, but BEGIN and the transaction's first statement travel as one simple query, so a transaction of
 * one statement and its COMMIT costs two round trips instead of three (decision 0231). node-postgres sends a query
 * only once the previous one is answered, and a bound statement cannot share a message with BEGIN; `EXECUTE` of a
 * server-side prepared statement can, planned as a prepared one. Its arguments are integers, written into the text.
 */
export async function inTransactionFrom<R extends QueryResultRow, T>(
  pool: Pool,
  first: ServerStatement,
  args: number[],
  work: (client: PoolClient, rows: R[]) => Promise<T>,
): Promise<T> {
  if (!args.every(Number.isSafeInteger)) throw new Error(`inTransactionFrom: ${first.name} takes integers only`);
  return transaction(
    pool,
    async (client) => {
      let prepared = preparedOn.get(client);
      if (!prepared?.has(first.name)) {
        await client.query(`prepare "${first.name}" (${first.params.join(', ')}) as ${first.text}`);
        prepared ??= new Set();
        prepared.add(first.name);
        preparedOn.set(client, prepared);
      }
      const results = (await client.query(`begin; execute "${first.name}"(${args.join(', ')})`)) as unknown as QueryResult<R>[];
      return results[1]?.rows ?? [];
    },
    work,
    // Gone from the session (a DEALLOCATE): prepared again next time.
    (client, err) => {
      if ((err as { code?: string }).code === '26000') preparedOn.get(client)?.delete(first.name);
    },
  );
}

/** Prepared on each connection the first time it runs there. */
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

/** The columns of an entity as MikroORM maps them, for raw SQL that yields entity-shaped objects. */
export class EntityColumns<T> {
  private readonly props: ColumnProp[];

  /** `only`: these properties alone (columns another table shares with this entity). */
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

  columns(): string[] {
    return this.props.map((p) => p.column);
  }

  /** Decimals and bigints as float8, so pg returns numbers. */
  select(alias: string): string {
    return this.props.map((p) => `${this.expr(alias, p)} as "${p.name}"`).join(', ');
  }

  json(alias: string): string {
    return `json_build_object(${this.props.map((p) => `'${p.name}', ${this.expr(alias, p)}`).join(', ')})`;
  }

  /** For `jsonb_populate_record(null::table, $n)`; absent values are null. */
  row(entity: T): Record<string, unknown> {
    const e = entity as Record<string, unknown>;
    return Object.fromEntries(this.props.map((p) => [p.column, e[p.name] ?? null]));
  }

  /** The pool returns timestamps as text: they become Dates. */
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
  /** An array column: its column type, e.g. `uuid[]`. */
  pgType: string;
}

/**
 * EntityColumns from the definition alone, for statement texts built before any ORM exists; a service test checks
 * the two agree. An unknown property type throws rather than being bound as the wrong type.
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
