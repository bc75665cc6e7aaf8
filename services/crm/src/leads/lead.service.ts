import { notFound } from '@svc/platform/errors';
import { salesEvent } from '@svc/platform/events/payloads';
import type { Logger } from '@svc/platform/logging';
import type { ServiceContext } from '@svc/platform/service';
import type { PoolClient } from 'pg';
import type { User } from '../companies/company.entity.js';
import type { SalesActions } from '../sales/sales.actions.js';
import type { SalesChanges } from '../sales/sales.changes.js';
import type { SalesCreation } from '../sales/sales.creation.js';
import type { SalesDetails } from '../sales/sales.details.js';
import type { SalesDeps, SalesService } from '../sales/sales.parts.js';
import { salesParts } from '../sales/sales.parts.js';
import type { SalesRefs } from '../sales/sales.refs.js';
import { type Actor, refOf } from '../sales/sales.rules.js';
import { type SalesRelations, withoutChatFields } from '../sales/sales.snapshot.js';
import type { Loaded } from '../sales/sales.store.js';
import type { SalesUpdate } from '../sales/sales.update.js';
import { LeadDetails, type LeadPerson } from './lead.detail.js';
import type { Lead } from './lead.entity.js';
import { leadKind } from './lead.kind.js';
import type { CreateLeadBody, ListLeadsQuery, UpdateLeadBody } from './lead.schema.js';
import { type LeadSnapshot, leadSnapshot } from './lead.snapshot.js';
import { LeadStore } from './lead.store.js';
import { LeadViewFolder } from './lead.views.js';

export type LoadedLead = Loaded<Lead, SalesRelations>;

type Json = Record<string, unknown>;

export class Leads implements SalesService<Lead, SalesRelations, LeadSnapshot, CreateLeadBody, UpdateLeadBody> {
  readonly kind = 'lead' as const;
  readonly logger: Logger;
  readonly store: LeadStore;
  readonly refs: SalesRefs;
  readonly changes: SalesChanges<Lead, SalesRelations, LeadSnapshot>;
  readonly creation: SalesCreation<Lead, SalesRelations, LeadSnapshot, CreateLeadBody>;
  readonly updates: SalesUpdate<Lead, SalesRelations, LeadSnapshot, UpdateLeadBody>;
  readonly actions: SalesActions<Lead, SalesRelations, LeadSnapshot>;
  readonly details: SalesDetails<Lead, SalesRelations, LeadSnapshot>;
  readonly cache: LeadDetails;
  readonly views: LeadViewFolder;

  constructor(ctx: ServiceContext, deps: SalesDeps) {
    this.logger = ctx.logger;
    this.store = new LeadStore(ctx.orm);
    const parts = salesParts(ctx, this.store.sales, leadKind, deps);
    this.refs = parts.refs;
    this.changes = parts.changes;
    this.creation = parts.creation;
    this.updates = parts.updates;
    this.actions = parts.actions;
    this.details = parts.details;
    this.views = new LeadViewFolder(this.store.sales.pool, this.store, ctx.logger);
    this.cache = new LeadDetails(this.store, (row) => this.details.parts(row));
  }

  snapshotOf({ record, rel }: LoadedLead): LeadSnapshot {
    return leadSnapshot(record, rel);
  }

  create(actor: Actor, body: CreateLeadBody, headerKey?: string) {
    return this.creation.create(actor, body, headerKey);
  }

  update(actor: Actor, ref: string, body: UpdateLeadBody) {
    return this.updates.update(actor, ref, body);
  }

  /** Each call records a view (decision 0015); without crm/chats.read the chat fields are false and empty. */
  async detailJson(actor: Actor, given: string, canReadChats = false): Promise<string> {
    const ref = await this.refs.resolve(actor.companyId, given);
    if (!ref || !refOf(ref)) throw notFound('Lead');
    const chatFields = canReadChats
      ? async (persons: LeadPerson[]) => JSON.stringify(await this.details.chatFields(actor.companyId, persons)).slice(1, -1)
      : undefined;
    const tasksOf = (id: string) => this.details.tasksOf(actor.companyId, id);
    return (await this.cache.read(actor.companyId, actor.userId, ref, chatFields, tasksOf)) ?? this.refs.refuse(actor, ref);
  }

  /** GET /leads (decision 0045); no chat fields. */
  async list(actor: Actor, q: ListLeadsQuery) {
    return this.store.list(await this.store.sales.pool, actor, q, (row) => {
      const { record, rel } = this.store.sales.select.fromRow(row);
      return withoutChatFields(leadSnapshot(record, rel));
    });
  }

  /** With `makeDeal` the deal is created in the same transaction and lead.won carries it (decision 0057). */
  async win(companyId: string, ref: string, userId: string, makeDeal?: (tx: PoolClient, lead: LoadedLead, by: User) => Promise<Json>) {
    return this.actions.close(await this.actions.target(companyId, ref, userId), {
      won: true,
      lossReasons: [],
      lossDescription: null,
      also: makeDeal && ((tx, _lead, before, by) => makeDeal(tx, before, by)),
      event: ({ snapshot, at, by }, deal) => salesEvent('lead', 'won', snapshot, { won_date: at, won_by: by, deal: deal ?? null }),
    });
  }
}
