/** GET /deals (decision 0046): the lead list's statement with the deal's filters and no only_new (deals record no views). */
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

  /** Without the chat fields (decision 0130). */
  async page(actor: Actor, q: ListDealsQuery): Promise<ListPage<Omit<DealSnapshot, ChatFieldKey>>> {
    return this.store.list(await this.store.sales.pool, actor, q, (row) => {
      const { record, rel } = this.store.sales.select.fromRow(row);
      return withoutChatFields(dealSnapshot(record, rel));
    });
  }
}

/** Served without Express (decision 0014). */
export function dealListRoutes(deals: DealList): ApiRouter {
  const r = apiRouter();
  r.route(listDeals, async (req, res, { query }) => {
    res.json(await deals.page(integrationOf(req), query));
  });
  return r;
}
