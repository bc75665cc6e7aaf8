/**
 * GET /deals (decision 0046): the lead list's statement, paging and filters (sales/sales.list.ts) on the deals,
 * with the deal's own filters (deal_source_id, value and expected_close_date ranges) and without only_new (deals
 * record no views). Records are DealSnapshots, read with the same select as GET /deals/{id}.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { nativePool } from '@svc/platform/db/native';
import { type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationOf } from '@svc/platform/http/app';
import type { Pool } from 'pg';
import type { Actor } from '../sales/sales.base.js';
import type { ChatFieldKey } from '../sales/sales.chats.js';
import { type ListPage, listed, originFilter, rangeFilters, SalesList, salesRecordFilters } from '../sales/sales.list.js';
import { withoutChatFields } from '../sales/sales.snapshot.js';
import { listDeals } from './deal.contract.js';
import type { ListDealsQuery } from './deal.schema.js';
import { type DealSnapshot, dealSnapshot } from './deal.snapshot.js';
import type { DealSql } from './deal.sql.js';

export class DealList {
  private readonly list: SalesList<ListDealsQuery>;
  private readonly pool: Promise<Pool>;

  constructor(
    orm: MikroORM,
    private readonly sql: DealSql,
  ) {
    this.pool = nativePool(orm);
    this.list = new SalesList<ListDealsQuery>('crm_deal_list', sql, [
      ...salesRecordFilters(sql),
      originFilter<ListDealsQuery>(sql, (q) => q.deal_source_id),
      ...rangeFilters<ListDealsQuery>(
        listed('value'),
        'numeric',
        (q) => q.value_min,
        (q) => q.value_max,
      ),
      ...rangeFilters<ListDealsQuery>(
        listed('expected_close_date'),
        'timestamptz',
        (q) => q.expected_close_from,
        (q) => q.expected_close_to,
      ),
    ]);
  }

  /** The deals the key creator may see, newest first (decision 0046), without the chat fields (decision 0130). */
  async page(actor: Actor, q: ListDealsQuery): Promise<ListPage<Omit<DealSnapshot, ChatFieldKey>>> {
    return this.list.page(await this.pool, actor, q, (row) => {
      const { record, rel } = this.sql.fromRow(row);
      return withoutChatFields(dealSnapshot(record, rel));
    });
  }
}

/** GET /deals (served without Express, decision 0014); the other deal routes are in deal.http.ts. */
export function dealListRoutes(deals: DealList): ApiRouter {
  const r = apiRouter();
  r.route(listDeals, async (req, res, { query }) => {
    res.json(await deals.page(integrationOf(req), query));
  });
  return r;
}
