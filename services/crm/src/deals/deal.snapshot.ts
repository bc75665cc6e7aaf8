import { iso } from '@svc/platform/http/json';
import type { NamedItem } from '../catalog/catalog.entity.js';
import { leadSnapshot } from '../leads/lead.snapshot.js';
import type { SalesRelations } from '../sales/sales.snapshot.js';
import { namedSummary } from '../sales/sales.summaries.js';
import type { Deal } from './deal.entity.js';

/** What a deal's snapshot shows besides its columns: the lead's relations plus its gain reasons and the lead it came from. */
export interface DealRelations extends SalesRelations {
  gainReasons: NamedItem[];
  lead: { id: string; code: number; title: string } | null;
}

export type DealSnapshot = ReturnType<typeof dealSnapshot>;

/**
 * DealSnapshot (spec "Deal payloads"): the LeadSnapshot fields with `deal_source` for lead_source and `lead` for
 * deals, plus crm_gain_reason(s) (GainReasonSummary: the first and all, in the order the win gave them),
 * won_reason_description, expected_close_date and temperature. Built on leadSnapshot, so the shared fields cannot
 * drift.
 */
export function dealSnapshot(deal: Deal, rel: DealRelations) {
  const { lead_source, deals: _deals, ...shared } = leadSnapshot(deal, rel);
  return {
    ...shared,
    deal_source: lead_source,
    lead: rel.lead,
    crm_gain_reason: rel.gainReasons[0] ? namedSummary(rel.gainReasons[0]) : null,
    crm_gain_reasons: rel.gainReasons.map(namedSummary),
    won_reason_description: deal.wonReasonDescription ?? null,
    expected_close_date: iso(deal.expectedCloseDate),
    temperature: deal.temperature ?? null,
  };
}
