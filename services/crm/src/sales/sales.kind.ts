import type { PoolClient } from 'pg';
import type { ChatSource } from './sales.chats.js';
import type { SalesKind, SalesRecord } from './sales.entity.js';
import type { NewSalesRecord } from './sales.rules.js';
import type { CreateSalesBody, UpdateSalesBody } from './sales.schema.js';
import type { SalesRelations } from './sales.snapshot.js';
import type { Loaded } from './sales.store.js';
import type { TaskSource } from './sales.tasks.js';

type Json = Record<string, unknown>;

/** What one kind adds to the shared operations, called where leads and deals differ. */
export interface RecordKind<
  R extends SalesRecord,
  Rel extends SalesRelations,
  S extends { updated_at: string },
  CB extends CreateSalesBody = CreateSalesBody,
  UB extends UpdateSalesBody = UpdateSalesBody,
> {
  readonly kind: SalesKind;
  readonly label: string;
  snapshot(record: R, rel: Rel): S;
  newRecord(shared: NewSalesRecord, body: CB): R;
  newRelations(shared: SalesRelations): Rel;
  createdPayload(snapshot: S, record: R, body: CB): Json;
  updateOwnFields?(tx: PoolClient, record: R, body: UB, before: Loaded<R, Rel>): Promise<void>;
  /** A deal won by PUT finds or makes its customer. */
  updated?(tx: PoolClient, record: R, before: Loaded<R, Rel>): Promise<void>;
  closing?(tx: PoolClient, record: R, won: boolean): Promise<void>;
}

/** Null: never asked; set once at start. */
export interface SalesSources {
  chats: ChatSource | null;
  tasks: TaskSource | null;
}
