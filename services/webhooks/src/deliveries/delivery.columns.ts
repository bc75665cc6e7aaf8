import { type DefinedColumn, definedColumns } from '@svc/platform/db/native';
import { type Delivery, DeliveryAttempt, Delivery as DeliveryEntity } from './delivery.entity.js';

/**
 * The column lists of the consumer's and dispatcher's statements, from the entities' definitions (decision 0090:
 * their texts are built at module load, before any ORM exists; test/columns.test.ts checks them against the ORM's).
 */

/** The definition's column of `property`; a property the entity lacks throws at load rather than naming no column. */
function columnOf(columns: DefinedColumn[], property: string): DefinedColumn {
  const found = columns.find((c) => c.property === property);
  if (!found) throw new Error(`no column for property ${property}`);
  return found;
}

export const DELIVERY_COLUMNS = definedColumns(DeliveryEntity);
export const ATTEMPT_COLUMNS = definedColumns(DeliveryAttempt);

export const deliveryColumn = (property: keyof Delivery & string) => columnOf(DELIVERY_COLUMNS, property);
export const attemptColumn = (property: string) => columnOf(ATTEMPT_COLUMNS, property);

/** `a.b, a.c` for the named properties of a definition, in the entity's order. */
export const selectList = (columns: DefinedColumn[], properties: readonly string[]) =>
  columns
    .filter((c) => properties.includes(c.property))
    .map((c) => c.column)
    .join(', ');

/** A delivery row as Postgres returns it (`returning d.*`, columns by name) as a Delivery. */
export function deliveryOfRow(r: Record<string, unknown>): Delivery {
  const d: Record<string, unknown> = {};
  for (const { property, column, pgType } of DELIVERY_COLUMNS) {
    const v = r[column];
    if (pgType === 'timestamptz') d[property] = v === null || v === undefined ? null : v instanceof Date ? v : new Date(v as string);
    else if (pgType === 'int4') d[property] = Number(v);
    else if (pgType === 'jsonb') d[property] = typeof v === 'string' ? JSON.parse(v) : v;
    else d[property] = v;
  }
  return d as Delivery;
}
