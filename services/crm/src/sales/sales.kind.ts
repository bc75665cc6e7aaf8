import type { PoolClient } from 'pg';
import type { ChatSource } from './sales.chats.js';
import type { SalesKind, SalesRecord } from './sales.entity.js';
import type { NewSalesRecord } from './sales.rules.js';
import type { CreateSalesBody, UpdateSalesBody } from './sales.schema.js';
import type { SalesRelations } from './sales.snapshot.js';
import type { Loaded } from './sales.store.js';
import type { TaskSource } from './sales.tasks.js';

type Json = Record<string, unknown>;

/**
 * What one kind of sales record adds to the operations leads and deals share: its snapshot, its new records and
 * their `<kind>.created` payload, and the steps of a change that touch its own columns and relations. The shared
 * collaborators (creation, update, actions, changes) each hold the kind and call these where the kind differs.
 */
export interface RecordKind<
  R extends SalesRecord,
  Rel extends SalesRelations,
  S extends { updated_at: string },
  CB extends CreateSalesBody = CreateSalesBody,
  UB extends UpdateSalesBody = UpdateSalesBody,
> {
  readonly kind: SalesKind;
  /** `Lead` or `Deal`, for not-found messages. */
  readonly label: string;
  /** The kind's snapshot (LeadSnapshot, DealSnapshot): what its events carry and the base of its detail. */
  snapshot(record: R, rel: Rel): S;
  /** A new record: the shared columns plus the kind's own, from the creation body. */
  newRecord(shared: NewSalesRecord, body: CB): R;
  /** A new record's relations: the shared ones plus the kind's own. */
  newRelations(shared: SalesRelations): Rel;
  /** The `<kind>.created` payload besides `custom_fields_changed`, which the creation adds when it has answers. */
  createdPayload(snapshot: S, record: R, body: CB): Json;
  /** What a PUT body changes beyond the fields leads and deals share (`record` is the copy being written). */
  updateOwnFields?(tx: PoolClient, record: R, body: UB, before: Loaded<R, Rel>): Promise<void>;
  /** What the kind does once a PUT wrote the record and its persons (a deal won by PUT finds or makes its customer). */
  updated?(tx: PoolClient, record: R, before: Loaded<R, Rel>): Promise<void>;
  /** What closing a record as won or lost changes in the kind's own columns and relations (`record` is being written). */
  closing?(tx: PoolClient, record: R, won: boolean): Promise<void>;
}

/** Where the details and events of a kind read what other services keep; null: never asked (set once at start). */
export interface SalesSources {
  /** The chats of the records' persons (the chat service). */
  chats: ChatSource | null;
  /** The number of a record's tasks (the tasks service). */
  tasks: TaskSource | null;
}
