import { type DefinedColumn, definedColumns } from '@svc/platform/db/native';
import { type Delivery, DeliveryAttempt, Delivery as DeliveryEntity } from './delivery.entity.js';

/** Texts are built at module load, before any ORM exists; test/columns.test.ts checks them (decision 0201). */

/** Throws at load rather than naming no column. */
function columnOf(columns: DefinedColumn[], property: string): DefinedColumn {
  const found = columns.find((c) => c.property === property);
  if (!found) throw new Error(`no column for property ${property}`);
  return found;
}

export const DELIVERY_COLUMNS = definedColumns(DeliveryEntity);
export const ATTEMPT_COLUMNS = definedColumns(DeliveryAttempt);

export const deliveryColumn = (property: keyof Delivery & string) => columnOf(DELIVERY_COLUMNS, property);
export const attemptColumn = (property: string) => columnOf(ATTEMPT_COLUMNS, property);

/** The pool hands timestamps over as text: they become Dates. */
export function entityOfRow<T>(columns: DefinedColumn[], r: Record<string, unknown>): T {
  const e: Record<string, unknown> = {};
  for (const { property, column, pgType } of columns) {
    const v = r[column];
    if (v === null || v === undefined) e[property] = null;
    else if (pgType === 'timestamptz') e[property] = v instanceof Date ? v : new Date(v as string);
    else if (pgType === 'int4') e[property] = Number(v);
    else if (pgType === 'jsonb') e[property] = typeof v === 'string' ? JSON.parse(v) : v;
    else e[property] = v;
  }
  return e as T;
}

export const deliveryOfRow = (r: Record<string, unknown>) => entityOfRow<Delivery>(DELIVERY_COLUMNS, r);

/** JSON as text: pg would send an array as a Postgres array. */
export const boundValues = (columns: DefinedColumn[], entity: object) =>
  columns.map((c) => {
    const v = (entity as Record<string, unknown>)[c.property];
    if (v === null || v === undefined) return null;
    return c.pgType === 'jsonb' ? JSON.stringify(v) : v;
  });
