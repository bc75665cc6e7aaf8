/**
 * GET /deals (decision 0046): the lead list's statement, paging and filters (sales/sales.list.store.ts) on the deals,
 * with the deal's own filters (deal_source_id, value and expected_close_date ranges) and without only_new (deals
 * record no views). Records are DealSnapshots, read with the same select as GET /deals/{id}.
 */
import { type ApiRouter, apiRouter } from '@svc/platform/http/api';
import { integrationOf } from '@svc/platform/http/app';
import type { ChatFieldKey } from '../sales/sales.chats.js';
import type { ListPage } from '../sales/sales.list.store.js';
import type { Actor } from '../sales/sales.rules.js';
import { withoutChatFields } from '../sales/sales.snapshot.js';
import { listDeals } from './deal.contract.js';
import type { ListDealsQuery } from './deal.schema.js';
import { type DealSnapshot, dealSnapshot } from './deal.snapshot.js';
import type { DealStore } from './deal.store.js';

export class DealList {
  constructor(private readonly store: DealStore) {}

  /** The deals the key creator may see, newest first (decision 0046), without the chat fields (decision 0130). */
  async page(actor: Actor, q: ListDealsQuery): Promise<ListPage<Omit<DealSnapshot, ChatFieldKey>>> {
    return this.store.list(await this.store.sales.pool, actor, q, (row) => {
      const { record, rel } = this.store.sales.select.fromRow(row);
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
