import type { InferEntity } from '@mikro-orm/core';
import { type DefinedColumn, definedColumns } from './native.js';

/** What a `defineEntity` definition offers at module load: its table and its properties. */
export interface Definition {
  meta: { tableName: string; properties: Record<string, unknown> };
}

type Property<T> = keyof T & string;

/**
 * An entity as a statement returns it without `hydrate`: every property present (null, never undefined), and
 * timestamps as the text Postgres prints (the pool under MikroORM does not parse them; JSON carries them as text
 * too). MikroORM's symbol keys are left out.
 */
export type Stored<T> = {
  [K in keyof T & string]-?: Date extends NonNullable<T[K]> ? Exclude<T[K], Date | undefined> | string : Exclude<T[K], undefined>;
};

/** An entity as a statement writes it: every property given (null for none), timestamps as Dates. */
export type Written<T> = { [K in keyof T & string]-?: Exclude<T[K], undefined> };

export interface JsonOptions {
  /**
   * `jsonb_build_object` instead of `json_build_object`: jsonb reorders keys and prints its own spacing, so a
   * statement that answered jsonb keeps answering the same text.
   */
  jsonb?: boolean;
}

// Some columns are keywords (`primary`): every name is quoted.
const quoted = (c: DefinedColumn) => `"${c.column}"`;

/**
 * The statement texts a store builds from an entity's definition (decision 0201): select lists that answer the
 * entity's own property names, inserts and whole-row updates with every column bound as its type. No column is
 * written by hand, so a column added to the entity is read and written everywhere at once.
 */
export class EntityTable<T> {
  readonly name: string;
  private readonly columns: DefinedColumn[];
  private readonly byProperty: Map<string, DefinedColumn>;

  constructor(entity: Definition) {
    this.name = entity.meta.tableName;
    this.columns = definedColumns(entity);
    this.byProperty = new Map(this.columns.map((c) => [c.property, c]));
  }

  /** The column of a property, quoted. */
  column(property: Property<T>): string {
    return quoted(this.def(property));
  }

  /** `"id", "company_id", ...` (every column, or those of `only`): the target list of an `insert ... select`. */
  columnList(only?: readonly Property<T>[]): string {
    return this.picked(only).map(quoted).join(', ');
  }

  /** `a.id as "id", a.company_id as "companyId", ...` (every property, or `only` these). */
  select(alias: string, only?: readonly Property<T>[]): string {
    return this.picked(only)
      .map((c) => `${this.expr(alias, c)} as "${c.property}"`)
      .join(', ');
  }

  /** `json_build_object('id', a.id, ...)` of a row (every property, or `only` these). */
  json(alias: string, only?: readonly Property<T>[], options: JsonOptions = {}): string {
    const fields = this.picked(only).map((c) => `'${c.property}', ${this.expr(alias, c)}`);
    return `${options.jsonb ? 'jsonb' : 'json'}_build_object(${fields.join(', ')})`;
  }

  /** A row of `select` or `json`: the pool under MikroORM answers timestamps as text, the entity holds Dates. */
  hydrate<R = T>(row: Record<string, unknown>): R {
    for (const c of this.columns) {
      const v = row[c.property];
      if (c.pgType === 'timestamptz' && typeof v === 'string') row[c.property] = new Date(v);
    }
    return row as R;
  }

  /** `insert into t (every column) values ($1::type, ...)`, bound by `values(entity)`; `tail` may add `returning ...`. */
  insert(tail = ''): string {
    return this.insertOf(this.columns, tail);
  }

  /** `insert into t (these columns) values ($1::type, ...)`, bound in the order of `properties`. */
  insertSome(properties: readonly Property<T>[], tail = ''): string {
    return this.insertOf(
      properties.map((p) => this.def(p)),
      tail,
    );
  }

  /** The values of `insert()`, in its order. */
  values(entity: T): unknown[] {
    return this.columns.map((c) => this.bound(c, (entity as Record<string, unknown>)[c.property]));
  }

  /**
   * `update t set <every other column> where <by columns>`: the store writes back the whole row its caller read
   * (locked) and changed. Bound by `values(entity)` as the insert is.
   */
  update(by: readonly Property<T>[]): string {
    const param = (c: DefinedColumn) => `$${this.columns.indexOf(c) + 1}::${c.pgType}`;
    const keys = by.map((p) => this.def(p));
    const set = this.columns.filter((c) => !keys.includes(c)).map((c) => `${quoted(c)} = ${param(c)}`);
    return `update ${this.name} set ${set.join(', ')} where ${keys.map((c) => `${quoted(c)} = ${param(c)}`).join(' and ')}`;
  }

  private insertOf(columns: readonly DefinedColumn[], tail: string): string {
    const params = columns.map((c, i) => `$${i + 1}::${c.pgType}`).join(', ');
    return `insert into ${this.name} (${columns.map(quoted).join(', ')}) values (${params}) ${tail}`.trim();
  }

  private def(property: string): DefinedColumn {
    const c = this.byProperty.get(property);
    if (!c) throw new Error(`${this.name} has no column for ${property}`);
    return c;
  }

  private picked(only?: readonly string[]): DefinedColumn[] {
    return only ? only.map((p) => this.def(p)) : this.columns;
  }

  // Decimals and bigints are read as float8, so pg answers numbers, as the entities type them.
  private expr(alias: string, c: DefinedColumn): string {
    const col = `${alias}.${quoted(c)}`;
    return c.pgType === 'numeric' || c.pgType === 'int8' ? `${col}::float8` : col;
  }

  // pg would send a JS array as a Postgres array: a jsonb column gets its JSON text.
  private bound(c: DefinedColumn, v: unknown): unknown {
    if (v === undefined) return null;
    return c.pgType === 'jsonb' && v !== null ? JSON.stringify(v) : v;
  }
}

/** The table of an entity definition, typed by the entity. */
export const tableOf = <E extends Definition>(entity: E) => new EntityTable<InferEntity<E>>(entity);
