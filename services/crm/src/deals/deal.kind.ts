import { CustomerStatus } from '../customers/customer.entity.js';
import { customerPartyOf, findOrCreateCustomer } from '../customers/customer.service.js';
import { SalesStatus } from '../sales/sales.entity.js';
import type { RecordKind } from '../sales/sales.kind.js';
import type { Deal } from './deal.entity.js';
import type { CreateDealBody, UpdateDealBody } from './deal.schema.js';
import { type DealRelations, type DealSnapshot, dealSnapshot } from './deal.snapshot.js';
import type { DealStore } from './deal.store.js';

/** What deals add to the shared operations (decisions 0050–0052). */
export function dealKind(store: DealStore): RecordKind<Deal, DealRelations, DealSnapshot, CreateDealBody, UpdateDealBody> {
  return {
    kind: 'deal',
    label: 'Deal',
    snapshot: dealSnapshot,
    newRecord: (shared, body) => ({
      ...shared,
      value: body.value ?? null,
      expectedCloseDate: body.expected_close_date ? new Date(body.expected_close_date) : null,
      temperature: body.temperature ?? null,
      wonReasonDescription: null,
      leadId: null,
    }),
    newRelations: (shared) => ({ ...shared, gainReasons: [], lead: null }),
    createdPayload: (snapshot) => ({ deal: snapshot }),

    /** Decision 0052: PUT fires only deal.updated (spec), never won or lost. */
    async updateOwnFields(tx, deal, body, before) {
      if (body.value !== undefined) deal.value = body.value;
      if (body.expected_close_date !== undefined)
        deal.expectedCloseDate = body.expected_close_date ? new Date(body.expected_close_date) : null;
      if (body.temperature !== undefined) deal.temperature = body.temperature;
      if (body.status === undefined || body.status === before.record.status) return;
      const now = new Date();
      deal.status = body.status;
      deal.wonDate = body.status === SalesStatus.won ? now : null;
      deal.lostDate = body.status === SalesStatus.lost ? now : null;
      if (body.status !== SalesStatus.won) {
        deal.wonReasonDescription = null;
        await store.replaceGainReasons(tx, deal, []);
      }
      deal.lostReasonDescription = null;
      await store.sales.replaceReasons(tx, store.sales.setLossReasons, deal.companyId, deal.id, []);
    },

    async updated(tx, deal, before) {
      if (deal.status !== SalesStatus.won || before.record.status === SalesStatus.won) return;
      const main = await store.mainPersonOf(tx, deal);
      const party = customerPartyOf(deal, { participants: main ? [{ participant: { main: true }, person: { id: main } }] : [] });
      if (party) await findOrCreateCustomer(tx, deal.companyId, party, new Date(), CustomerStatus.ACTIVE);
    },

    /** A deal lost (or won, where the win sets them) keeps no gain reasons or won description. */
    async closing(tx, deal, won) {
      if (won) return;
      deal.wonReasonDescription = null;
      await store.replaceGainReasons(tx, deal, []);
    },
  };
}
