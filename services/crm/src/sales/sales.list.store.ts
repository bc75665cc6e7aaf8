/** One prepared statement per list with nullable filters (decisions 0045, 0046); visibility is in it, so hidden records are not counted. */
import { run, type Statement, statement } from '@svc/platform/db/native';
import { invalidField, isUuid } from '@svc/platform/errors';
import type { Pool } from 'pg';
import type { SalesListQuery } from './sales.list.js';

type Json = Record<string, unknown>;

export const VIEWER = '$2';

export interface ListFilter<Q> {
  type: 'uuid' | 'int' | 'numeric' | 'timestamptz' | 'text' | 'boolean';
  value: (q: Q) => unknown;
  where: (p: string) => string;
}

/** Inclusive. */
export function rangeFilters<Q>(
  column: string,
  type: 'timestamptz' | 'numeric',
  from: (q: Q) => unknown,
  to: (q: Q) => unknown,
): ListFilter<Q>[] {
  return [
    { type, value: from, where: (p) => `${column} >= ${p}` },
    { type, value: to, where: (p) => `${column} <= ${p}` },
  ];
}

const R = 'r';

/** `search` matches without letter case, `%` and `_` literal, on title or a person's name or contact. */
export function salesRecordFilters(sql: ListedKind): ListFilter<SalesListQuery>[] {
  const { kind, fk } = sql;
  const persons = (p: string) => `exists (
        select 1 from ${kind}_participants fp join persons fpp on fpp.id = fp.person_id
        where fp.${fk} = ${R}.id and fp.company_id = ${R}.company_id and (fpp.name ilike ${p} or exists (
          select 1 from person_contacts fc where fc.person_id = fpp.id and fc.company_id = ${R}.company_id and fc.value ilike ${p})))`;
  return [
    { type: 'uuid', value: (q) => q.stage_id, where: (p) => `${R}.stage_id = ${p}` },
    { type: 'uuid', value: (q) => q.pipeline_id, where: (p) => `${R}.pipeline_id = ${p}` },
    { type: 'uuid', value: (q) => q.responsible_id, where: (p) => `${R}.responsible_id = ${p}` },
    { type: 'int', value: (q) => q.status, where: (p) => `${R}.status = ${p}` },
    {
      type: 'uuid',
      value: (q) => q.tag_id,
      where: (p) =>
        `exists (select 1 from ${kind}_tags ft where ft.${fk} = ${R}.id and ft.company_id = ${R}.company_id and ft.tag_id = ${p})`,
    },
    {
      type: 'uuid',
      value: (q) => q.person_id,
      where: (p) =>
        `exists (select 1 from ${kind}_participants fr where fr.${fk} = ${R}.id and fr.company_id = ${R}.company_id and fr.person_id = ${p})`,
    },
    ...rangeFilters<SalesListQuery>(
      `${R}.created_at`,
      'timestamptz',
      (q) => q.created_from,
      (q) => q.created_to,
    ),
    ...rangeFilters<SalesListQuery>(
      `${R}.updated_at`,
      'timestamptz',
      (q) => q.updated_from,
      (q) => q.updated_to,
    ),
    {
      type: 'text',
      value: (q) => (q.search ? `%${q.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null),
      where: (p) => `(${R}.title ilike ${p} or ${persons(p)})`,
    },
  ];
}

export function originFilter<Q>(sql: ListedKind, value: (q: Q) => unknown): ListFilter<Q> {
  return {
    type: 'uuid',
    value,
    where: (p) => `coalesce((select fa.lead_source_id from marketing_acquisitions fa
      where fa.company_id = ${R}.company_id and fa.${sql.fk} = ${R}.id and fa.active order by fa.created_at desc, fa.id desc limit 1),
      ${R}.lead_source_id) = ${p}`,
  };
}

export const listed = (column: string) => `${R}.${column}`;

export interface ListedKind {
  kind: string;
  table: string;
  fk: string;
  relationsSelect(alias: string, parts: { proposals: boolean }): string;
  relationsJoin(alias: string): string;
  visibleSql(alias: string, userParam: string): string;
}

export interface ListPage<R> {
  total: number;
  records: R[];
  next_cursor: string | null;
}

/** One more row than `take` is read to tell whether a next page exists. */
export class SalesList<Q extends SalesListQuery> {
  readonly statement: Statement;

  constructor(
    name: string,
    sql: ListedKind,
    private readonly filters: ListFilter<Q>[],
  ) {
    const n = filters.length;
    const where = [
      `${R}.company_id = $1 and ${sql.visibleSql(R, VIEWER)}`,
      ...filters.map((f, i) => {
        const p = `$${i + 3}::${f.type}`;
        return `(${p} is null or ${f.where(p)})`;
      }),
    ].join('\n      and ');
    const [at, id, skip, take] = [n + 3, n + 4, n + 5, n + 6].map((i) => `$${i}`);
    this.statement = statement(
      name,
      `select (select count(*)::int from ${sql.table} ${R} where ${where}) as total,
        coalesce((select json_agg(to_json(x) order by x."createdAt" desc, x.id desc) from (
          select ${sql.relationsSelect(R, { proposals: true })} from ${sql.table} ${R} ${sql.relationsJoin(R)}
          where ${where} and (${at}::timestamptz is null or (${R}.created_at, ${R}.id) < (${at}::timestamptz, ${id}::uuid))
          order by ${R}.created_at desc, ${R}.id desc offset ${skip}::int limit ${take}::int + 1) x), '[]') as records`,
    );
  }

  /** The cursor keeps `created_at` as Postgres wrote it (microseconds), before it becomes a Date. */
  async page<R>(db: Pool, actor: { companyId: string; userId: string }, q: Q, toRecord: (row: Json) => R): Promise<ListPage<R>> {
    const take = q.take ?? 20;
    const cursor = q.cursor ? decodeCursor(q.cursor) : null;
    const [row] = await run<{ total: number; records: Json[] }>(db, this.statement, [
      actor.companyId,
      actor.userId,
      ...this.filters.map((f) => f.value(q) ?? null),
      cursor?.at ?? null,
      cursor?.id ?? null,
      q.skip ?? 0,
      take,
    ]);
    const rows = row?.records ?? [];
    const last = rows[take - 1];
    const next_cursor = rows.length > take && last ? encodeCursor(String(last.createdAt), String(last.id)) : null;
    return { total: Number(row?.total ?? 0), records: rows.slice(0, take).map(toRecord), next_cursor };
  }
}

const encodeCursor = (createdAt: string, id: string) => Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');

function decodeCursor(cursor: string): { at: string; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    if (typeof at === 'string' && !Number.isNaN(Date.parse(at)) && isUuid(id)) return { at, id };
  } catch {
    // falls through to the 400
  }
  throw invalidField('cursor', 'not a cursor of this list');
}
