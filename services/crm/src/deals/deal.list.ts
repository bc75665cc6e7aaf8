/**
 * GET /deals (decision 0046): the lead list's statement, paging and filters (sales/sales.list.ts) on the deals,
 * with the deal's own filters (deal_source_id, value and expected_close_date ranges) and without only_new (deals
 * record no views). Records are DealSnapshots, read with the same select as GET /deals/{id}.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { nativePool } from '@svc/platform/db/native';
import { type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationWith } from '@svc/platform/http/app';
import { parse } from '@svc/platform/http/parse';
import type { Pool } from 'pg';
import { z } from 'zod';
import type { Actor } from '../sales/sales.base.js';
import {
  dateTimeParam,
  type ListPage,
  listed,
  numberParam,
  originFilter,
  rangeFilters,
  SalesList,
  salesListQueryShape,
  salesRecordFilters,
} from '../sales/sales.list.js';
import { type DealSnapshot, dealSnapshot } from './deal.snapshot.js';
import type { DealSql } from './deal.sql.js';

/** GET /deals query. Unknown parameters (only_new, lead_source_id among them) are a 400. */
export const listDealsQuery = z.strictObject({
  ...salesListQueryShape,
  deal_source_id: z.uuid('must be a UUID').optional(),
  value_min: numberParam.optional(),
  value_max: numberParam.optional(),
  expected_close_from: dateTimeParam.optional(),
  expected_close_to: dateTimeParam.optional(),
});
export type ListDealsQuery = z.infer<typeof listDealsQuery>;

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

  /** The deals the key creator may see, newest first (decision 0046). */
  async page(actor: Actor, q: ListDealsQuery): Promise<ListPage<DealSnapshot>> {
    return this.list.page(await this.pool, actor, q, (row) => {
      const { record, rel } = this.sql.fromRow(row);
      return dealSnapshot(record, rel);
    });
  }
}

/** GET /deals (served without Express, decision 0014); the other deal routes are in deal.http.ts. */
export function dealListRoutes(deals: DealList): ApiRouter {
  const r = apiRouter();
  r.get('/deals', async (req, res) => {
    const identity = integrationWith(req, 'crm/deal.read');
    res.json(await deals.page(identity, parse(listDealsQuery, req.query)));
  });
  return r;
}
