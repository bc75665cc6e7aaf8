import { notFound } from '@svc/platform/errors';
import { salesEvent } from '@svc/platform/events/payloads';
import type { ServiceContext } from '@svc/platform/service';
import type { PoolClient } from 'pg';
import type { User } from '../companies/company.entity.js';
import type { Actor, Loaded } from '../sales/sales.base.js';
import type { NewSalesRecord } from '../sales/sales.rules.js';
import { SalesRecords } from '../sales/sales.service.js';
import { type SalesRelations, withoutChatFields } from '../sales/sales.snapshot.js';
import { LeadDetails, type LeadPerson } from './lead.detail.js';
import type { Lead } from './lead.entity.js';
import type { CreateLeadBody, ListLeadsQuery } from './lead.schema.js';
import { type LeadSnapshot, leadSnapshot } from './lead.snapshot.js';
import { LeadSql } from './lead.sql.js';
import { LeadViewFolder } from './lead.views.js';

export type LoadedLead = Loaded<Lead, SalesRelations>;

type Json = Record<string, unknown>;

/** crm's lead operations: the ones leads share with deals (SalesRecords), the detail with views, the list, win. */
export class Leads extends SalesRecords<Lead, SalesRelations, LeadSnapshot> {
  declare readonly sql: LeadSql;
  readonly views: LeadViewFolder;
  readonly details: LeadDetails;

  constructor(ctx: ServiceContext) {
    super(ctx, new LeadSql(ctx.orm));
    this.views = new LeadViewFolder(this.pool, this.sql, ctx.logger);
    this.details = new LeadDetails(this.pool, this.sql, (row) => this.detailParts(row));
  }

  snapshot(lead: Lead, rel: SalesRelations): LeadSnapshot {
    return leadSnapshot(lead, rel);
  }

  protected newRecord(shared: NewSalesRecord): Lead {
    return { ...shared, viewsCount: 0, detailVersion: 0 };
  }

  protected newRelations(shared: SalesRelations): SalesRelations {
    return shared;
  }

  /** LeadCreatedPayload: the lead, and the qualification when the body sent one (previous values null). */
  protected createdPayload(snapshot: LeadSnapshot, lead: Lead, body: CreateLeadBody): Json {
    if (body.quality_rating === undefined) return { lead: snapshot };
    return {
      lead: snapshot,
      previous_quality: null,
      previous_quality_reason: null,
      new_quality: lead.qualityRating,
      new_quality_reason: lead.qualityReason,
    };
  }

  /**
   * GET /leads/{id}: the lead detail as JSON text; each call records a view by the key creator and counts it
   * (LeadDetails: a cache of assembled details checked against versions, decision 0015). `canReadChats`: the key has
   * crm/chats.read; without it the chat fields are false and empty (spec, Lead detail).
   */
  async detailJson(actor: Actor, given: string, canReadChats = false): Promise<string> {
    const ref = await this.resolveRef(actor.companyId, given);
    if (!ref || !this.refOf(ref)) throw notFound('Lead');
    const chatFields = canReadChats
      ? async (persons: LeadPerson[]) => JSON.stringify(await this.chatFieldsOfDetail(actor.companyId, persons)).slice(1, -1)
      : undefined;
    return (await this.details.read(actor.companyId, actor.userId, ref, chatFields)) ?? this.refuse(actor, ref);
  }

  /** GET /leads: the leads the key creator may see, newest first, with filters and paging (decision 0045); no chat fields. */
  async list(actor: Actor, q: ListLeadsQuery) {
    return this.sql.list.page(await this.pool, actor, q, (row) => {
      const { record, rel } = this.sql.fromRow(row);
      return withoutChatFields(leadSnapshot(record, rel));
    });
  }

  /**
   * The admin API's win: lead.won (and lead.updated). `makeDeal` (a win with `deal`) creates the deal in the same
   * transaction, its deal.created with it, and lead.won carries its DealSnapshot (decision 0057); else `deal` is null.
   */
  async win(companyId: string, ref: string, userId: string, makeDeal?: (client: PoolClient, lead: LoadedLead, by: User) => Promise<Json>) {
    return this.close(await this.target(companyId, ref, userId), {
      won: true,
      lossReasons: [],
      lossDescription: null,
      also: makeDeal && ((client, _lead, before, by) => makeDeal(client, before, by)),
      event: ({ snapshot, at, by }, deal) => salesEvent('lead', 'won', snapshot, { won_date: at, won_by: by, deal: deal ?? null }),
    });
  }
}
