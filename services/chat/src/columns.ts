import { type DefinedColumn, definedColumns } from '@svc/platform/db/native';
import type { PoolClient } from 'pg';

/** What a store's functions run on: the pool or a transaction's client (inTransaction). */
export type Queryable = Pick<PoolClient, 'query'>;

/** Every property present (null, never undefined); timestamps stay the text Postgres prints. */
export type Stored<T> = {
  [K in keyof T & string]-?: Date extends NonNullable<T[K]> ? Exclude<T[K], Date | undefined> | string : Exclude<T[K], undefined>;
};

/** Built at module load (decision 0201), so a row comes back typed by the entity. */
export class Columns<T> {
  private readonly defined: DefinedColumn[];

  constructor(entity: { meta: { properties: Record<string, unknown> } }, only?: readonly (keyof T & string)[]) {
    const all = definedColumns(entity);
    this.defined = only ? only.map((p) => all.find((c) => c.property === p) as DefinedColumn) : all;
  }

  of(property: keyof T & string): string {
    return (this.defined.find((c) => c.property === property) as DefinedColumn).column;
  }

  /** `a.company_id as "companyId", ...` */
  select(alias: string): string {
    return this.defined.map((c) => `${alias}.${c.column} as "${c.property}"`).join(', ');
  }

  /** `jsonb_build_object('companyId', a.company_id, ...)` */
  json(alias: string): string {
    return `jsonb_build_object(${this.defined.map((c) => `'${c.property}', ${alias}.${c.column}`).join(', ')})`;
  }

  /** `(company_id, ...) values ($1::uuid, ...)` for these properties, bound in this order. */
  insert(properties: readonly (keyof T & string)[], first = 1): string {
    const cols = properties.map((p) => this.defined.find((c) => c.property === p) as DefinedColumn);
    return `(${cols.map((c) => c.column).join(', ')}) values (${cols.map((c, i) => `$${first + i}::${c.pgType}`).join(', ')})`;
  }
}

/** An entity as a statement writes it: every property given (null for none), timestamps as Dates. */
export type Written<T> = { [K in keyof T & string]-?: Exclude<T[K], undefined> };
