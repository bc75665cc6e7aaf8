import type { Logger } from '@svc/platform/logging';
import type { ServiceContext } from '@svc/platform/service';
import { ContactStore } from '../contacts/contact.store.js';
import { SalesActions } from './sales.actions.js';
import { SalesChanges } from './sales.changes.js';
import { SalesCreation } from './sales.creation.js';
import { SalesDetails } from './sales.details.js';
import type { SalesKind, SalesRecord } from './sales.entity.js';
import type { RecordKind, SalesSources } from './sales.kind.js';
import type { OriginSource } from './sales.origins.js';
import { SalesRefs } from './sales.refs.js';
import type { CreateSalesBody, UpdateSalesBody } from './sales.schema.js';
import type { SalesRelations } from './sales.snapshot.js';
import type { Loaded, SalesStore } from './sales.store.js';
import { SalesUpdate } from './sales.update.js';

export interface SalesDeps {
  origins: OriginSource;
  sources: SalesSources;
}

export interface SalesParts<
  R extends SalesRecord,
  Rel extends SalesRelations,
  S extends { updated_at: string },
  CB extends CreateSalesBody,
  UB extends UpdateSalesBody,
> {
  refs: SalesRefs;
  changes: SalesChanges<R, Rel, S>;
  creation: SalesCreation<R, Rel, S, CB>;
  updates: SalesUpdate<R, Rel, S, UB>;
  /** The admin API's dedicated actions. */
  actions: SalesActions<R, Rel, S>;
  details: SalesDetails<R, Rel, S>;
}

/** A kind's service as the shared routes see it (batch creation, the admin actions). */
export interface SalesService<
  R extends SalesRecord,
  Rel extends SalesRelations,
  S extends { updated_at: string },
  CB extends CreateSalesBody,
  UB extends UpdateSalesBody,
> extends SalesParts<R, Rel, S, CB, UB> {
  readonly kind: SalesKind;
  readonly logger: Logger;
  snapshotOf(loaded: Loaded<R, Rel>): S;
}

/** The collaborators of one kind, each holding the store and the kind's rules it needs, and the ones it calls. */
export function salesParts<
  R extends SalesRecord,
  Rel extends SalesRelations,
  S extends { updated_at: string },
  CB extends CreateSalesBody,
  UB extends UpdateSalesBody,
>(ctx: ServiceContext, store: SalesStore<R, Rel>, kind: RecordKind<R, Rel, S, CB, UB>, deps: SalesDeps): SalesParts<R, Rel, S, CB, UB> {
  const contacts = new ContactStore(ctx.orm);
  const refs = new SalesRefs(store, kind.label);
  const changes = new SalesChanges<R, Rel, S>(ctx, store, kind, contacts, deps.sources);
  return {
    refs,
    changes,
    creation: new SalesCreation<R, Rel, S, CB>({ ctx, store, kind, refs, changes, contacts, origins: deps.origins }),
    updates: new SalesUpdate<R, Rel, S, UB>({ store, kind, refs, changes, contacts, origins: deps.origins }),
    actions: new SalesActions<R, Rel, S>(store, kind, refs, changes),
    details: new SalesDetails<R, Rel, S>(store, kind, deps.sources),
  };
}
