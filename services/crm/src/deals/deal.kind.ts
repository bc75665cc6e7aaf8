import { CustomerStatus } from '../customers/customer.entity.js';
import { customerPartyOf, findOrCreateCustomer } from '../customers/customer.service.js';
import { SalesStatus } from '../sales/sales.entity.js';
import type { RecordKind } from '../sales/sales.kind.js';
import type { Deal } from './deal.entity.js';
import type { CreateDealBody, UpdateDealBody } from './deal.schema.js';
import { type DealRelations, type DealSnapshot, dealSnapshot } from './deal.snapshot.js';
import type { DealStore } from './deal.store.js';

/**
 * What deals add to the shared operations (decisions 0050–0052): value, expected close date and temperature; the
 * lead a deal came from; gain reasons, cleared when a deal is no longer won; a customer for a deal won by PUT.
 */
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
    /** DealCreatedPayload: `{deal}` (the creation adds `custom_fields_changed` when it has answers). */
    createdPayload: (snapshot) => ({ deal: snapshot }),

    /**
     * PUT's deal fields: `value`, `expected_close_date`, `temperature` (null clears) and `status` (decision 0052). A
     * new status sets its date (won_date or lost_date, now) and clears the other; the loss reasons and description are
     * cleared (a PUT names none), and the gain reasons and won description unless the deal is now won. It fires only
     * deal.updated (spec), never won or lost.
     */
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

    /** A deal won by PUT (status 2) makes its customer as the admin API's win does, from the persons the PUT left it. */
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
